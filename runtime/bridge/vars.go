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

// Var is a loaded global variable of type T. In the kernel it is read and
// written through the memory-mapped data section (kernel 5.5 and later); in
// process, through the runtime's section memory. Both are the memory the
// programs use. Variables in .rodata are read-only after load.
type Var[T any] struct {
	name string
	k    *ebpf.Variable
	mem  []byte    // in process: the variable's bytes in its section
	h    mapHandle // the section; in process its lock guards mem
	ro   bool
}

// NewVar returns the variable name of s, checking its size against T.
func NewVar[T any](s *Set, name string) (*Var[T], error) {
	if s.Coll != nil {
		if v := s.Coll.Variables[name]; v != nil {
			if int(v.Size()) != sizeOf[T]() {
				return nil, fmt.Errorf("variable %s: %d bytes, Go type has %d", name, v.Size(), sizeOf[T]())
			}
			h := mapHandle{name: name, set: s}
			if vs := s.Spec.Variables[name]; vs != nil {
				h.name = vs.SectionName
			}
			return &Var[T]{name: name, k: v, h: h}, nil
		}
	}
	vs := s.Spec.Variables[name]
	if vs == nil || s.User == nil {
		return nil, fmt.Errorf("variable %s: not loaded", name)
	}
	h := s.userHandle(vs.SectionName)
	if h.u == nil {
		return nil, fmt.Errorf("variable %s: section %s not loaded", name, vs.SectionName)
	}
	val, err := h.u.Lookup(make([]byte, 4))
	if err != nil {
		return nil, fmt.Errorf("variable %s: section %s: %w", name, vs.SectionName, err)
	}
	size := uint64(vs.Size())
	if int(size) != sizeOf[T]() {
		return nil, fmt.Errorf("variable %s: %d bytes, Go type has %d", name, size, sizeOf[T]())
	}
	if uint64(vs.Offset)+size > uint64(len(val)) {
		return nil, fmt.Errorf("variable %s: outside section %s", name, vs.SectionName)
	}
	return &Var[T]{name: name, mem: val[vs.Offset : uint64(vs.Offset)+size], h: h, ro: h.u.Spec().ReadOnly()}, nil
}

// Get reads the variable's current value.
func (v *Var[T]) Get() (T, error) {
	var t T
	if err := v.h.begin(); err != nil {
		return t, fmt.Errorf("variable %s: %w", v.name, err)
	}
	defer v.h.end()
	if v.k != nil {
		return t, v.k.Get(bytesOf(&t))
	}
	copy(bytesOf(&t), v.mem)
	return t, nil
}

// Set writes the variable; programs see the new value at once.
func (v *Var[T]) Set(value T) error {
	if v.k == nil && v.ro {
		return fmt.Errorf("variable %s: %w", v.name, ebpf.ErrReadOnly)
	}
	if err := v.h.begin(); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	defer v.h.end()
	if v.k != nil {
		return v.k.Set(bytesOf(&value))
	}
	copy(v.mem, bytesOf(&value))
	return nil
}

// ReadOnly reports whether the variable cannot be written after load.
func (v *Var[T]) ReadOnly() bool {
	if v.k != nil {
		return v.k.ReadOnly()
	}
	return v.ro
}

// Raw returns the kernel variable, or nil in process.
func (v *Var[T]) Raw() *ebpf.Variable { return v.k }
