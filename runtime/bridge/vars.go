package bridge

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// VarSpec is a global variable of type T before load: its initial value
// (for .rodata, the constant the verifier sees) can be read and set.
type VarSpec[T any] struct {
	v *ebpf.VariableSpec
}

// NewVarSpec wraps v, checking its size against T.
func NewVarSpec[T any](v *ebpf.VariableSpec) (*VarSpec[T], error) {
	if v == nil {
		return nil, fmt.Errorf("nil variable spec")
	}
	if int(v.Size()) != sizeOf[T]() {
		return nil, fmt.Errorf("variable %s: %d bytes, Go type has %d", v.Name, v.Size(), sizeOf[T]())
	}
	return &VarSpec[T]{v: v}, nil
}

// Get returns the variable's initial value.
func (s *VarSpec[T]) Get() (T, error) {
	var t T
	err := s.v.Get(bytesOf(&t))
	return t, err
}

// Set changes the variable's initial value; it takes effect at load.
func (s *VarSpec[T]) Set(value T) error {
	return s.v.Set(bytesOf(&value))
}

// Raw returns the underlying cilium/ebpf variable spec.
func (s *VarSpec[T]) Raw() *ebpf.VariableSpec { return s.v }

// Var is a loaded global variable of type T, read and written through the
// memory-mapped data section (kernel 5.5 and later). Variables in .rodata
// are read-only after load.
type Var[T any] struct {
	v *ebpf.Variable
}

// NewVar wraps v, checking its size against T.
func NewVar[T any](v *ebpf.Variable) (*Var[T], error) {
	if v == nil {
		return nil, fmt.Errorf("nil variable")
	}
	if int(v.Size()) != sizeOf[T]() {
		return nil, fmt.Errorf("variable %v: %d bytes, Go type has %d", v, v.Size(), sizeOf[T]())
	}
	return &Var[T]{v: v}, nil
}

// Get reads the variable's current value.
func (v *Var[T]) Get() (T, error) {
	var t T
	err := v.v.Get(bytesOf(&t))
	return t, err
}

// Set writes the variable; programs see the new value at once.
func (v *Var[T]) Set(value T) error {
	return v.v.Set(bytesOf(&value))
}

// ReadOnly reports whether the variable cannot be written after load.
func (v *Var[T]) ReadOnly() bool { return v.v.ReadOnly() }

// Raw returns the underlying cilium/ebpf variable.
func (v *Var[T]) Raw() *ebpf.Variable { return v.v }
