package bridge

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
)

// ErrDisabled is returned by operations on a program whose autoload was
// switched off before load: the program was never loaded.
var ErrDisabled = errors.New("not loaded: autoload was switched off before load")

// ProgramSpec is one program of an object before load, kernel or
// user-space. Switching its autoload off (libbpf's
// bpf_program__set_autoload) leaves it out of the load: a tool that
// prefers fentry can disable the fentry program and keep a tracepoint
// variant when the kernel refuses trampolines. The maps it refers to are
// still created.
type ProgramSpec struct {
	// Spec is cilium/ebpf's view of the program.
	Spec   *ebpf.ProgramSpec
	name   string
	off    bool
	manual bool // autoattach off
}

// NewProgramSpec returns the program name of spec, with autoload on.
func NewProgramSpec(spec *ebpf.CollectionSpec, name string) (*ProgramSpec, error) {
	p := spec.Programs[name]
	if p == nil {
		return nil, fmt.Errorf("program %s: not in the object", name)
	}
	return &ProgramSpec{Spec: p, name: name}, nil
}

// Name returns the program's C name.
func (p *ProgramSpec) Name() string { return p.name }

// SetAutoload says whether Load loads the program (the default) or leaves
// it out.
func (p *ProgramSpec) SetAutoload(on bool) { p.off = !on }

// Autoload reports whether Load will load the program.
func (p *ProgramSpec) Autoload() bool { return !p.off }

// withDisabled is o whose Disabled list also names the programs among
// progs with autoload off, and whose Manual list those with autoattach
// off; it shares no list with o.
func withDisabled(o LoadOptions, progs []*ProgramSpec) LoadOptions {
	o.Disabled = append([]string(nil), o.Disabled...)
	o.Manual = append([]string(nil), o.Manual...)
	for _, p := range progs {
		if p != nil && p.off {
			o.Disabled = append(o.Disabled, p.name)
		}
		if p != nil && p.manual {
			o.Manual = append(o.Manual, p.name)
		}
	}
	return o
}

// Disabled reports whether the program name was left out of the load
// (its autoload was off, or it was removed from the spec).
func (s *Set) Disabled(name string) bool {
	return s.disabled[name]
}

// applyDisabled removes the disabled programs from the kernel spec k and
// from the user-space programs o loads, and records them in s, with the
// programs whose autoattach is off.
func (s *Set) applyDisabled(k *ebpf.CollectionSpec, o *LoadOptions) error {
	s.disabled = map[string]bool{}
	for _, name := range o.Manual {
		if s.Spec.Programs[name] == nil {
			return fmt.Errorf("program %s (autoattach off): not in the object", name)
		}
		if s.manual == nil {
			s.manual = map[string]bool{}
		}
		s.manual[name] = true
	}
	for _, name := range o.Disabled {
		p := s.Spec.Programs[name]
		if p == nil {
			return fmt.Errorf("disabled program %s: not in the object", name)
		}
		s.disabled[name] = true
		if k != nil {
			delete(k.Programs, name)
		}
	}
	if len(s.disabled) == 0 {
		return nil
	}
	var user []string
	for name, p := range s.Spec.Programs {
		if IsUserProgram(p) && !s.disabled[name] && (o.Programs == nil || slices.Contains(o.Programs, name)) {
			user = append(user, name)
		}
	}
	if user == nil {
		user = []string{}
	}
	o.Programs = user
	return nil
}
