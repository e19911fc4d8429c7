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
	if err := checkVarSpec(v, sizeOf[T]()); err != nil {
		return nil, err
	}
	return &VarSpec[T]{v: v}, nil
}

func checkVarSpec(v *ebpf.VariableSpec, size int) error {
	if v == nil {
		return fmt.Errorf("nil variable spec")
	}
	if int(v.Size()) != size {
		return fmt.Errorf("variable %s: %d bytes, Go type has %d", v.Name, v.Size(), size)
	}
	return nil
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
	v variable
}

// The variables of Go's basic types have handle types of their own
// (basicvars.go, written by internal/basicvars): Uint32Var is Var[uint32]
// and Uint32VarSpec VarSpec[uint32], with the same methods. Skeletons name
// these, since Go compiles every method of an instantiated type again in
// each package that names it; these are compiled once, here.

// variable is Var's untyped part: the generic methods convert and call it,
// so that the code compiled per Go type is a few lines.
type variable struct {
	name string
	k    *ebpf.Variable
	mem  []byte    // in process: the variable's bytes in its section
	h    mapHandle // the section; in process its lock guards mem
	ro   bool
}

// NewVar returns the variable name of s, checking its size against T.
func NewVar[T any](s *Set, name string) (*Var[T], error) {
	v, err := newVariable(s, name, sizeOf[T]())
	if err != nil {
		return nil, err
	}
	return &Var[T]{v}, nil
}

func newVariable(s *Set, name string, size int) (variable, error) {
	if s.Coll != nil {
		if v := s.Coll.Variables[name]; v != nil {
			if int(v.Size()) != size {
				return variable{}, fmt.Errorf("variable %s: %d bytes, Go type has %d", name, v.Size(), size)
			}
			h := mapHandle{name: name, set: s}
			if vs := s.Spec.Variables[name]; vs != nil {
				h.name = vs.SectionName
			}
			return variable{name: name, k: v, h: h}, nil
		}
	}
	vs := s.Spec.Variables[name]
	if vs == nil || s.User == nil {
		return variable{}, fmt.Errorf("variable %s: not loaded", name)
	}
	h := s.userHandle(vs.SectionName)
	if h.u == nil {
		return variable{}, fmt.Errorf("variable %s: section %s not loaded", name, vs.SectionName)
	}
	val, err := h.u.Lookup(make([]byte, 4))
	if err != nil {
		return variable{}, fmt.Errorf("variable %s: section %s: %w", name, vs.SectionName, err)
	}
	if uint64(vs.Size()) != uint64(size) {
		return variable{}, fmt.Errorf("variable %s: %d bytes, Go type has %d", name, vs.Size(), size)
	}
	if uint64(vs.Offset)+uint64(size) > uint64(len(val)) {
		return variable{}, fmt.Errorf("variable %s: outside section %s", name, vs.SectionName)
	}
	return variable{name: name, mem: val[vs.Offset : uint64(vs.Offset)+uint64(size)], h: h, ro: h.u.Spec().ReadOnly()}, nil
}

// Get reads the variable's current value.
func (v *Var[T]) Get() (T, error) {
	var t T
	err := v.v.get(bytesOf(&t))
	return t, err
}

// Set writes the variable; programs see the new value at once.
func (v *Var[T]) Set(value T) error {
	return v.v.set(bytesOf(&value))
}

// ReadOnly reports whether the variable cannot be written after load.
func (v *Var[T]) ReadOnly() bool { return v.v.readOnly() }

// Raw returns the kernel variable, or nil in process.
func (v *Var[T]) Raw() *ebpf.Variable { return v.v.k }

func (v *variable) get(b []byte) error {
	if err := v.h.begin(); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	defer v.h.end()
	if v.k != nil {
		return v.k.Get(b)
	}
	copy(b, v.mem)
	return nil
}

func (v *variable) set(b []byte) error {
	if v.k == nil && v.ro {
		return fmt.Errorf("variable %s: %w", v.name, ebpf.ErrReadOnly)
	}
	if err := v.h.begin(); err != nil {
		return fmt.Errorf("variable %s: %w", v.name, err)
	}
	defer v.h.end()
	if v.k != nil {
		return v.k.Set(b)
	}
	copy(v.mem, b)
	return nil
}

func (v *variable) readOnly() bool {
	if v.k != nil {
		return v.k.ReadOnly()
	}
	return v.ro
}
