//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package runtime

import "encoding/binary"

// FrameStore16, FrameStore32 and FrameStore64 store the low bytes of v at
// fp[k:] in little-endian order (see frame_le.go); on a big-endian host
// they are byte stores.
func FrameStore16(fp *[StackSize]byte, k int, v uint64) {
	binary.LittleEndian.PutUint16(fp[k:k+2], uint16(v))
}

func FrameStore32(fp *[StackSize]byte, k int, v uint64) {
	binary.LittleEndian.PutUint32(fp[k:k+4], uint32(v))
}

func FrameStore64(fp *[StackSize]byte, k int, v uint64) {
	binary.LittleEndian.PutUint64(fp[k:k+8], v)
}
