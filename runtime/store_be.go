//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package runtime

import "encoding/binary"

// PutLE16, PutLE32 and PutLE64 store the low bytes of v at the start of b
// in little-endian order (see store_le.go); on a big-endian host they are
// byte stores.
func PutLE16(b []byte, v uint64) { binary.LittleEndian.PutUint16(b, uint16(v)) }

func PutLE32(b []byte, v uint64) { binary.LittleEndian.PutUint32(b, uint32(v)) }

func PutLE64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
