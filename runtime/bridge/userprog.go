package bridge

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/skelgen/skelgen/runtime"
)

// userRun is what every kind of user-space program has: the loaded
// program, its translation when the skeleton has one, and what Run needs
// to run it more than once at a time.
//
// A run needs run state of its own (stack, registers, budget). Runs take
// it from seats: a few run states, each with a busy flag on a cache line
// of its own, the first of them the program's own. Until two runs meet,
// every run takes the first seat. From then on a run goes first to the
// seat that its processor (Go's P) used last, which hint remembers
// without locking, so that goroutines running at once on different
// processors settle on different seats and touch no memory in common. A
// run that finds every seat busy — more goroutines in runs than seats, or
// runs started by host functions of runs in progress — takes a clone from
// spare instead, so that Run never waits for another run and a host
// function may run its own program again.
type userRun struct {
	name  string
	set   *Set
	own   engine    // the loaded program, with its own run state: seats[0]'s
	seats []seat    // see above; each busy flag is a seat of set.life
	hint  sync.Pool // of *seat: the seat a processor's last run took
	// met is set when a run first finds a seat busy; until then runs
	// take the first seat without consulting hint.
	met   atomic.Bool
	spare sync.Pool // of clones of own
}

// seat is a run state that runs take in turn. Its engine is made by the
// first run to take it; only the run holding the seat touches e.
type seat struct {
	seatCount // a run holds the seat, and is in a host function
	e         *engine
	_         [cacheLine - 16]byte
}

// cacheLine is the size that keeps seats' busy flags on lines of their
// own: the usual 64 bytes, doubled for processors that fetch lines in
// pairs.
const cacheLine = 128

// maxSeats bounds the seats of a program; runs beyond them take clones.
const maxSeats = 64

// engine runs a program with one run state: the translation when there is
// one, else the interpreter.
type engine struct {
	prog     *runtime.Program
	compiled *runtime.Compiled
}

func (e *engine) run(ctx []byte) (uint64, error) {
	return e.runLen(ctx, uint64(len(ctx)))
}

// runLen is run with n in r2 (see runtime.Program.RunLen).
func (e *engine) runLen(ctx []byte, n uint64) (uint64, error) {
	if e.compiled != nil {
		return e.compiled.RunLen(ctx, n)
	}
	return e.prog.RunLen(ctx, n)
}

// clone returns an engine sharing e's code and maps with run state of its
// own.
func (e *engine) clone() *engine {
	if e.compiled != nil {
		c := e.compiled.Clone()
		return &engine{prog: c.Program(), compiled: c}
	}
	return &engine{prog: e.prog.Clone()}
}

func newUserRun(s *Set, name string, translation func() runtime.Translation) (*userRun, error) {
	up := s.userPrograms()
	if up == nil || up.progs[name] == nil {
		return nil, fmt.Errorf("user program %s: not loaded", name)
	}
	// The runs of a program share its own run state (the first seat):
	// a second call returns the first call's runs.
	up.mu.Lock()
	defer up.mu.Unlock()
	if p := up.runs[name]; p != nil {
		if (p.own.compiled != nil) != (translation != nil) {
			return nil, fmt.Errorf("user program %s: already made %s its translation", name, map[bool]string{true: "with", false: "without"}[p.own.compiled != nil])
		}
		return p, nil
	}
	p := &userRun{name: name, set: s, own: engine{prog: up.progs[name]}}
	if translation != nil {
		c, err := p.own.prog.Bind(translation())
		if err != nil {
			return nil, fmt.Errorf("user program %s: %w", name, err)
		}
		p.own.compiled = c
	}
	p.spare.New = func() any { return p.counted() }
	p.seats = make([]seat, min(max(goruntime.GOMAXPROCS(0), 2), maxSeats))
	p.seats[0].e = &p.own
	p.assign(&p.seats[0], &p.own)
	for i := range p.seats {
		s.life.seat(&p.seats[i].seatCount)
	}
	up.runs[name] = p
	return p, nil
}

// run runs the program over ctx (r1 its address, r2 its length). The
// common case, a run that finds its processor's seat free, costs a
// compare-and-swap and a store on the seat's busy flag, which count the
// run towards Close as well (lifetime.take, give); a run that finds every
// seat busy counts itself with enter and takes a clone.
func (p *userRun) run(ctx []byte) (r0 uint64, err error) {
	s := &p.seats[0]
	if p.met.Load() {
		if h, _ := p.hint.Get().(*seat); h != nil {
			s = h
		}
	}
	if !s.claim() || !p.set.life.admit(&s.seatCount) { // take, inlined
		// Busy, or Close has begun: then runSpare fails with ErrClosed
		// without trying every seat.
		if p.set.life.closed() {
			return p.runSpare(ctx)
		}
		p.met.Store(true)
		if s = p.vacant(s); s == nil {
			return p.runSpare(ctx)
		}
	}
	e := s.e
	if e == nil {
		e = p.own.clone()
		p.assign(s, e)
		s.e = e
	}
	// A run that does not return gives the seat back through its abort
	// function (see assign), so that this path needs no deferred call.
	if e.compiled != nil {
		r0, err = e.compiled.RunLen(ctx, uint64(len(ctx)))
	} else {
		r0, err = e.prog.RunLen(ctx, uint64(len(ctx)))
	}
	// leaveSeat, as two calls the compiler inlines here.
	p.set.life.give(&s.seatCount)
	p.remember(s)
	if err != nil {
		return r0, fmt.Errorf("user program %s: %w", p.name, err)
	}
	return r0, nil
}

// assign makes e the run state of s: its host functions count on the seat's
// hosted counter, and a run of it that ends without returning (a host
// function's panic going on, runtime.Goexit) gives the seat back.
func (p *userRun) assign(s *seat, e *engine) {
	e.prog.SetTag(&s.hosted)
	e.prog.SetAbort(func() { p.leaveSeat(s) })
}

// vacant takes a seat other than tried, nil when it finds none free.
func (p *userRun) vacant(tried *seat) *seat {
	n := uint32(len(p.seats))
	start := rand.Uint32N(n)
	for i := range n {
		s := &p.seats[(start+i)%n]
		if s != tried && p.set.life.take(&s.seatCount) {
			return s
		}
	}
	return nil
}

// leaveSeat gives s back and, once runs have met, remembers it for the
// processor's next run.
func (p *userRun) leaveSeat(s *seat) {
	p.set.life.give(&s.seatCount)
	p.remember(s)
}

// remember keeps s as the processor's next seat once runs have met.
func (p *userRun) remember(s *seat) {
	if p.met.Load() {
		p.hint.Put(s)
	}
}

// counted returns a clone of the program's run state for runs counted by
// enter: its host functions count on lifetime.hosted.
func (p *userRun) counted() *engine {
	e := p.own.clone()
	e.prog.SetTag(&p.set.life.hosted)
	return e
}

// runSpare runs on a clone of the program's run state.
func (p *userRun) runSpare(ctx []byte) (uint64, error) {
	if err := p.set.life.enter(); err != nil {
		return 0, fmt.Errorf("user program %s: %w", p.name, err)
	}
	defer p.set.life.leave()
	e := p.spare.Get().(*engine)
	r0, err := e.run(ctx)
	p.spare.Put(e)
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
// to the loaded program (Bind checks that they match). A later call for
// the same program (as UserProgram or BufferProgram) shares the first
// call's runs, and fails if only one of them has a translation.
func NewUserProgram[T any](s *Set, name string, translation func() runtime.Translation) (*UserProgram[T], error) {
	r, err := newUserRun(s, name, translation)
	if err != nil {
		return nil, err
	}
	return &UserProgram[T]{r}, nil
}

// Translated reports whether Run uses the ahead-of-time translation.
func (p *UserProgram[T]) Translated() bool { return p.r.own.compiled != nil }

// Raw returns the runtime program. Its Run is the interpreter on the
// program's own run state, and running it directly bypasses Run's guards:
// it must not run while Run may use that state (from another goroutine),
// and Close does not wait for it. Its tag and abort function
// (runtime.Program.SetTag, SetAbort) are the skeleton's, which tell Close
// about runs inside host functions and give a seat back after a run that
// did not return, so setting them on it changes nothing.
func (p *UserProgram[T]) Raw() *runtime.Program { return p.r.own.prog }

// Run runs the program once with ctx as its context: the program reads ctx
// and its writes to the context land in ctx. ctx may be nil. A program that
// faults or exhausts its budget returns an error naming the instruction;
// the process and the maps are unaffected by the failed run beyond the
// writes it made before failing. After Close, Run fails with ErrClosed.
//
// Run may be called from several goroutines at once, and from a host
// function of a run in progress, of this program too: each run has its own
// stack, registers and budget, and runs that share user-space maps take
// turns on them. A host function that runs its own program again without
// end recurses without end, as a Go function would.
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
func (p *BufferProgram) Translated() bool { return p.r.own.compiled != nil }

// Raw returns the runtime program (see UserProgram.Raw).
func (p *BufferProgram) Raw() *runtime.Program { return p.r.own.prog }

// Run runs the program once over data: r1 points at data (writable: the
// program's writes land in it), r2 holds len(data). data may be nil. It
// behaves as UserProgram.Run does towards Close, goroutines and host
// functions.
func (p *BufferProgram) Run(data []byte) (uint64, error) {
	return p.r.run(data)
}
