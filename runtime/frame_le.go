//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package runtime

import "unsafe"

// FrameStore16, FrameStore32 and FrameStore64 store the low bytes of v at
// fp[k:] in little-endian order, as one machine store. Translated code
// stores registers into stack frames with them rather than byte by byte:
// where the compiler knows the upper bytes of v are zero (after a mask, a
// 32-bit operation), it splits merged byte stores into narrower ones, and
// a later load of the whole slot, such as a helper reading its key, then
// cannot take the value from the store buffer and waits for the stores
// to retire.
func FrameStore16(fp *[StackSize]byte, k int, v uint64) {
	*(*uint16)(unsafe.Pointer((*[2]byte)(fp[k : k+2]))) = uint16(v)
}

func FrameStore32(fp *[StackSize]byte, k int, v uint64) {
	*(*uint32)(unsafe.Pointer((*[4]byte)(fp[k : k+4]))) = uint32(v)
}

func FrameStore64(fp *[StackSize]byte, k int, v uint64) {
	*(*uint64)(unsafe.Pointer((*[8]byte)(fp[k : k+8]))) = v
}
