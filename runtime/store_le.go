//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package runtime

import "unsafe"

// PutLE16, PutLE32 and PutLE64 store the low bytes of v at the start of b
// in little-endian order, as one machine store; b must be long enough.
// The accessors and translated code store with them rather than byte by
// byte: where the compiler knows the upper bytes of v are zero (after a
// mask or a 32-bit operation), it splits merged byte stores into narrower
// ones, and a later load of the whole slot, such as a helper reading a
// map key, then cannot take its value from the store buffer and waits
// for the stores to retire.
func PutLE16(b []byte, v uint64) { *(*uint16)(unsafe.Pointer((*[2]byte)(b))) = uint16(v) }

func PutLE32(b []byte, v uint64) { *(*uint32)(unsafe.Pointer((*[4]byte)(b))) = uint32(v) }

func PutLE64(b []byte, v uint64) { *(*uint64)(unsafe.Pointer((*[8]byte)(b))) = v }
