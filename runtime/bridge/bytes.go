package bridge

import (
	"bytes"
	"unsafe"
)

// bytesOf returns the memory of *v as a byte slice (no copy).
func bytesOf[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// sizeOf returns the size of T in bytes.
func sizeOf[T any]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// fromBytes copies b into a new T; a b shorter than T leaves the rest zero.
func fromBytes[T any](b []byte) T {
	var v T
	copy(bytesOf(&v), b)
	return v
}

// CString returns b up to its first NUL byte, as C reads a char array:
// the C string methods of a skeleton's types call it.
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
