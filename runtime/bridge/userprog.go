package bridge

import (
	"fmt"
	"sync"

	"github.com/skelgen/skelgen/runtime"
)

// userRun is what every kind of user-space program has: the loaded
// program, its translation when the skeleton has one, and the guards of
// Run (one run at a time, none after Close).
type userRun struct {
	name     string
	set      *Set
	mu       sync.Mutex
	prog     *runtime.Program
	compiled *runtime.Compiled
}

func newUserRun(s *Set, name string, translation func() runtime.Translation) (*userRun, error) {
	if s.User == nil || s.User.progs[name] == nil {
		return nil, fmt.Errorf("user program %s: not loaded", name)
	}
	p := &userRun{name: name, set: s, prog: s.User.progs[name]}
	if translation != nil {
		c, err := p.prog.Bind(translation())
		if err != nil {
			return nil, fmt.Errorf("user program %s: %w", name, err)
		}
		p.compiled = c
	}
	return p, nil
}

// run runs the program over ctx (r1 its address, r2 its length).
func (p *userRun) run(ctx []byte) (uint64, error) {
	p.set.life.RLock()
	defer p.set.life.RUnlock()
	if p.set.closed.Load() {
		return 0, fmt.Errorf("user program %s: %w", p.name, ErrClosed)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var r0 uint64
	var err error
	if p.compiled != nil {
		r0, err = p.compiled.Run(ctx)
	} else {
		r0, err = p.prog.Run(ctx)
	}
	if err != nil {
		return r0, fmt.Errorf("user program %s: %w", p.name, err)
	}
	return r0, nil
}

// UserProgram is a ubpf/ program whose context is a C struct of Go type T
// (struct{} for programs without one). It runs its ahead-of-time
// translation when the skeleton has one, else the interpreter; both give
// the same results and errors.
type UserProgram[T any] struct {
	r *userRun
}

// NewUserProgram returns the user-space program name of s. translation,
// when not nil, returns the program's translation into Go, which is bound
// to the loaded program (Bind checks that they match).
func NewUserProgram[T any](s *Set, name string, translation func() runtime.Translation) (*UserProgram[T], error) {
	r, err := newUserRun(s, name, translation)
	if err != nil {
		return nil, err
	}
	return &UserProgram[T]{r}, nil
}

// Translated reports whether Run uses the ahead-of-time translation.
func (p *UserProgram[T]) Translated() bool { return p.r.compiled != nil }

// Raw returns the runtime program. Its Run is the interpreter, and
// running it directly bypasses Run's guards: one run at a time, and none
// after Close.
func (p *UserProgram[T]) Raw() *runtime.Program { return p.r.prog }

// Run runs the program once with ctx as its context: the program reads ctx
// and its writes to the context land in ctx. ctx may be nil. A program that
// faults or exhausts its budget returns an error naming the instruction;
// the process and the maps are unaffected by the failed run beyond the
// writes it made before failing.
func (p *UserProgram[T]) Run(ctx *T) (uint64, error) {
	var b []byte
	if ctx != nil {
		b = bytesOf(ctx)
	}
	return p.r.run(b)
}

// BufferProgram is a ubpf/ program in ubpf's calling convention,
// u64 f(u8 *data, u64 len): it runs over a byte buffer.
type BufferProgram struct {
	r *userRun
}

// NewBufferProgram returns the user-space program name of s, which takes
// a buffer and its length; translation as for NewUserProgram.
func NewBufferProgram(s *Set, name string, translation func() runtime.Translation) (*BufferProgram, error) {
	r, err := newUserRun(s, name, translation)
	if err != nil {
		return nil, err
	}
	return &BufferProgram{r}, nil
}

// Translated reports whether Run uses the ahead-of-time translation.
func (p *BufferProgram) Translated() bool { return p.r.compiled != nil }

// Raw returns the runtime program (see UserProgram.Raw).
func (p *BufferProgram) Raw() *runtime.Program { return p.r.prog }

// Run runs the program once over data: r1 points at data (writable: the
// program's writes land in it), r2 holds len(data). data may be nil.
func (p *BufferProgram) Run(data []byte) (uint64, error) {
	return p.r.run(data)
}
