package bridge

import (
	"fmt"

	"github.com/skelgen/skelgen/runtime"
)

// The helpers below turn the registers of a host function call into Go
// values; generated host bindings call them.

// String reads the NUL-terminated string at addr (at most 4096 bytes).
func String(m *runtime.Machine, addr uint64) (string, error) {
	return m.CString(addr, maxString)
}

// CopyIn returns a copy of the T at addr in program memory.
func CopyIn[T any](m *runtime.Machine, addr uint64) (*T, error) {
	v := new(T)
	b, err := m.Bytes(addr, uint64(sizeOf[T]()))
	if err != nil {
		return nil, err
	}
	copy(bytesOf(v), b)
	return v, nil
}

// CopyOut writes *v back to addr in program memory.
func CopyOut[T any](m *runtime.Machine, addr uint64, v *T) error {
	b, err := m.WritableBytes(addr, uint64(sizeOf[T]()))
	if err != nil {
		return err
	}
	copy(b, bytesOf(v))
	return nil
}

// Pointer is an untyped pointer argument of a host function (void *): an
// address in the calling program's memory, valid during the call.
type Pointer struct {
	Machine *runtime.Machine
	Addr    uint64
}

// Bytes returns the n bytes at the pointer, bounds-checked against the
// region they lie in. The slice aliases program memory.
func (p Pointer) Bytes(n uint64) ([]byte, error) {
	if p.Machine == nil {
		return nil, fmt.Errorf("pointer used outside its call")
	}
	return p.Machine.WritableBytes(p.Addr, n)
}

// IsNull reports whether the program passed NULL.
func (p Pointer) IsNull() bool { return p.Addr == 0 }
