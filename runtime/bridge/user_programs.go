package bridge

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

// Load loads spec: its kernel programs and the maps they use into the kernel
// (unless opts.InProcess), its ubpf/ programs into the runtime, with
// externs binding the host functions those programs call by name. progs
// are the skeleton's program specs, as for LoadKernelOnly.
//
// Its generic part is only the options' copy without their host: a
// skeleton package compiles no more of it.
func Load[H any](spec *ebpf.CollectionSpec, externs map[string]runtime.Func, opts *Options[H], progs ...*ProgramSpec) (*Set, error) {
	return loadUser(spec, externs, withoutHost(opts), progs)
}

// loadUser is Load without the host.
func loadUser(spec *ebpf.CollectionSpec, externs map[string]runtime.Func, o *LoadOptions, progs []*ProgramSpec) (*Set, error) {
	return load(spec, withDisabled(*o, progs), &userParts{
		kernelView: (*UserSet).kernelMap,
		kconfig:    userKconfig,
		programs: func(s *Set, names []string, o *LoadOptions) error {
			return loadPrograms(s, names, externs, o)
		},
	})
}

// userKconfig returns the .kconfig map of the externs the user-space
// programs progs read, filled as for kernel programs; nil when they read
// none.
func userKconfig(spec *ebpf.CollectionSpec, progs []*ebpf.ProgramSpec, mem *runtime.MapMemory) (runtime.Map, error) {
	ks, err := kconfigMapSpec(spec, progs, true)
	if ks == nil || err != nil {
		return nil, err
	}
	return userMap(ks, spec.ByteOrder, mem)
}

// userPrograms are the loaded user-space programs of a set, and the
// runs the skeleton made of them (NewUserProgram and its kin).
type userPrograms struct {
	progs map[string]*runtime.Program
	mu    sync.Mutex          // guards runs
	runs  map[string]*userRun // by program name: see newUserRun
}

func (up *userPrograms) close() {
	for _, p := range up.progs {
		p.Close()
	}
}

func (up *userPrograms) hooks(spec *ebpf.CollectionSpec) ([]loadedHook, error) {
	hooks, err := Hooks(spec)
	if err != nil {
		return nil, err
	}
	var out []loadedHook
	for _, h := range hooks {
		up.mu.Lock()
		run := up.runs[h.Program]
		up.mu.Unlock()
		if run == nil {
			continue // autoload off, or not in the skeleton
		}
		e := run.counted()
		out = append(out, loadedHook{Hook: h, e: e, key: e.prog.Machine(), size: contextSize(spec.Programs[h.Program])})
	}
	return out, nil
}

// userPrograms returns the set's user-space programs, nil when it has
// none.
func (s *Set) userPrograms() *userPrograms {
	if s.User == nil {
		return nil
	}
	return s.User.loaded()
}

// loaded returns u's user-space programs, nil when it has none.
func (u *UserSet) loaded() *userPrograms {
	up, _ := u.progs.(*userPrograms)
	return up
}

// RawProgram returns the runtime program of the user-space program name
// of s, nil when s has none of that name. It is a function, not a method
// of Set or UserSet, so that a module's runtime copy keeps the VM only
// when the module names it (or a user-space program).
func RawProgram(s *Set, name string) *runtime.Program {
	if up := s.userPrograms(); up != nil {
		return up.progs[name]
	}
	return nil
}

// loadPrograms loads the user-space programs names of s into the runtime.
func loadPrograms(s *Set, names []string, externs map[string]runtime.Func, o *LoadOptions) error {
	spec := s.Spec
	u := s.User
	up := &userPrograms{progs: map[string]*runtime.Program{}, runs: map[string]*userRun{}}
	u.progs = up
	// Host functions, the Output writer and the Records callback are the
	// host's code in the middle of a run: they may close the object or
	// run programs.
	hosted := make(map[string]runtime.Func, len(externs))
	for name, f := range externs {
		if f != nil {
			f = s.life.host(f, true)
		}
		hosted[name] = f
	}
	for name, f := range s.actions() {
		hosted[name] = s.life.host(f, true)
	}
	helpers := runtime.Builtins()
	bindBuiltins(helpers, o, func(f runtime.Func) runtime.Func { return s.life.host(f, false) })
	if o.Output != nil {
		helpers.Wrap(runtime.HelperTracePrintk, func(f runtime.Func) runtime.Func { return s.life.host(f, false) })
	}
	for _, name := range names {
		if err := checkExterns(spec.Programs[name], externs); err != nil {
			return err
		}
	}
	for _, name := range names {
		ps, err := programSpec(spec, spec.Programs[name], u.maps)
		if err != nil {
			return fmt.Errorf("program %s: %w", name, err)
		}
		prog, err := runtime.Load(ps, &runtime.Options{Helpers: helpers, Externs: hosted, Budget: o.Budget, Output: o.Output})
		if err != nil {
			return fmt.Errorf("program %s (section %s): %w", name, spec.Programs[name].SectionName, err)
		}
		up.progs[name] = prog
	}
	return nil
}

// host wraps a host function so that a counted run calling it does not
// hold Close back while it runs. With closes set, the call fails with
// ErrClosed when Close has begun by the time it returns; the Output
// writer and the Records callback are wrapped without it, as their
// failures do not fail a run.
func (l *lifetime) host(f runtime.Func, closes bool) runtime.Func {
	return func(m *runtime.Machine, r1, r2, r3, r4, r5 uint64) (v uint64, err error) {
		h, _ := m.Tag().(*atomic.Int32)
		if h == nil {
			// A run Close does not count (of Raw or its clones).
			v, err = f(m, r1, r2, r3, r4, r5)
			if closes && err == nil && l.closed() {
				err = ErrClosed
			}
			return v, err
		}
		l.suspend(h)
		defer func() {
			if l.resume(h) && closes && err == nil {
				err = ErrClosed
			}
		}()
		return f(m, r1, r2, r3, r4, r5)
	}
}

// checkExterns fails naming the first host function p calls that externs
// does not bind: the skeleton was loaded without its Host.
func checkExterns(p *ebpf.ProgramSpec, externs map[string]runtime.Func) error {
	for _, ins := range p.Instructions {
		if ref := ins.Reference(); ins.IsKfuncCall() && ref != "" && !IsBuiltin(ref) && externs[ref] == nil {
			return fmt.Errorf("program %s (section %s) calls host function %s, and nothing implements it (a skeleton takes it from Host in its load options)", p.Name, p.SectionName, ref)
		}
	}
	return nil
}
