package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Tool runs a loaded object as a whole tool: the driving call behind a
// skeleton's Serve method. NewTool registers the programs AttachAll
// attaches (those Bind bound); the generated Serve registers the Go
// callbacks of the record streams (Handle), then calls Serve; the hooks
// are the object's user programs in hook sections (see Hooks), found by
// Serve itself. The package
// documentation describes the order of events and what runs where.
type Tool struct {
	set *Set
	// Signals stops the tool on SIGINT and SIGTERM too.
	Signals bool
	// Started, when not nil, is called on Serve's goroutine once the
	// programs are attached and the begin hook has run, before any record
	// is read.
	Started func()
	// Lost, when not nil, receives the count of each notice of samples
	// the kernel lost on a perf event array, with the map's name.
	Lost func(stream string, n uint64)

	attachers map[string]func() (link.Link, error)
	order     []string
	handlers  map[string]func([]byte)

	// While Serve runs.
	streams  map[string]*stream
	machines map[any]*hookRun // by the key of their run state (programs.hook)
	draining atomic.Bool
	broken   atomic.Bool // its error is not an *ExitError (failed)
	stopCh   chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex // guards what follows
	err      error      // the first error, or an *ExitError
	links    map[string]link.Link
	attached map[string]bool
}

// NewTool returns a tool that runs the loaded object s, with the programs
// whose sections name their attach points registered (Program), in the
// order of the skeleton's fields that Bind set. It is not
// inlined into the skeleton's Serve, which would compile the generic code
// its body reaches in every skeleton package.
//
//go:noinline
func NewTool(s *Set) *Tool {
	t := &Tool{set: s, attachers: map[string]func() (link.Link, error){}, handlers: map[string]func([]byte){}}
	if s != nil {
		for _, p := range s.autoProgs {
			if name, attach := p.autoattach(); name != "" {
				t.Program(name, attach)
			}
		}
	}
	return t
}

// Program registers a kernel program that Serve attaches at start (in the
// order of registration) and that the skelgen_attach and skelgen_detach
// actions may name: attach is its Attach method.
func (t *Tool) Program(name string, attach func() (link.Link, error)) {
	if _, ok := t.attachers[name]; !ok {
		t.order = append(t.order, name)
	}
	t.attachers[name] = attach
}

// RecordSource is a typed ring buffer or perf event array: a stream of
// records of type E.
type RecordSource[E any] interface {
	streamName() string
	decode([]byte) E
}

func (r *RingBuf[E]) streamName() string        { return r.h.name }
func (r *RingBuf[E]) decode(b []byte) E         { return fromBytes[E](b) }
func (p *PerfEventArray[E]) streamName() string { return p.h.name }
func (p *PerfEventArray[E]) decode(b []byte) E  { return fromBytes[E](b) }

// Handle makes fn receive the records of src that its record hook passes
// (every record when it has none), decoded as E; a record shorter than E
// leaves the rest zero, as Read does. fn nil: the records are read for
// the hook alone, or not at all. Every record is decoded into the same E,
// so that passing one on allocates nothing: *E is valid until fn returns
// (copy it to keep it).
func Handle[E any](t *Tool, src RecordSource[E], fn func(*E)) {
	if fn == nil {
		return
	}
	v := new(E)
	t.handlers[src.streamName()] = func(b []byte) {
		*v = src.decode(b)
		fn(v)
	}
}

// ExitError is the error of Serve when a program stopped the tool with a
// non-zero exit code (skelgen_stop).
type ExitError struct {
	Code int
	// Program is the program that called skelgen_stop.
	Program string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("program %s stopped the tool with exit code %d", e.Program, e.Code)
}

// ErrServing: Serve was called on an object that is being served.
var ErrServing = errors.New("the object is already being served")

// hookRun is a hook with its own run state: only Serve's goroutine runs
// it, so it never waits for a run of the program that Go code started.
type hookRun struct {
	Hook
	set  *Set
	e    hookRunner
	size int // the context's size; records are zero-filled to it
}

func (h *hookRun) exec(ctx []byte, n uint64) (uint64, error) {
	l := &h.set.life
	if err := l.enter(); err != nil {
		return 0, fmt.Errorf("hook %s (section %s): %w", h.Program, h.Section, err)
	}
	defer l.leave()
	return h.run(ctx, n)
}

// run is exec in a call already counted for Close.
func (h *hookRun) run(ctx []byte, n uint64) (uint64, error) {
	r0, err := h.e.runLen(ctx, n)
	if err != nil {
		return r0, fmt.Errorf("hook %s (section %s): %w", h.Program, h.Section, err)
	}
	return r0, nil
}

// context runs h over a zeroed context of its size.
func (h *hookRun) runEmpty() error {
	var ctx []byte
	if h.size > 0 {
		ctx = make([]byte, h.size)
	}
	_, err := h.exec(ctx, uint64(len(ctx)))
	return err
}

// stream is a ring buffer or perf event array Serve reads.
type stream struct {
	name    string
	hook    *hookRun // ubpf/record/<name>
	lost    *hookRun // ubpf/lost/<name>
	deliver func([]byte)
	rd      streamReader
	each    func(raw []byte, lost uint64, cpu int) // t.record for this stream
	ctx     []byte                                 // the record hook's context, reused
	armed   chan struct{}                          // Serve's goroutine asks the waiter to wait
}

// streamReader reads one stream's records. Serve's goroutine consumes
// them in batches; while the stream is empty, a goroutine of its own
// waits for the next record and wakes Serve's.
type streamReader interface {
	// wait blocks until a record is there to consume, the deadline
	// passes (os.ErrDeadlineExceeded), or the reader is closed. It never
	// runs beside consume.
	wait() error
	// consume passes up to max of the records there now to fn, without
	// waiting: raw is valid during fn only. It returns how many.
	consume(max int, fn func(raw []byte, lost uint64, cpu int)) int
	// drain makes wait return at once, for good: what is there is then
	// consumed without waiting for more. It may be called while wait
	// runs.
	drain()
	SetDeadline(time.Time)
	Close() error
}

// batch is the most records Serve's goroutine passes on from one stream
// before it looks at the stop, the interval hooks and the other streams.
const batch = 256

func (r *RingBufReader[E]) wait() error {
	if r.u == nil {
		return r.k.wait()
	}
	if r.pending != nil {
		return nil
	}
	rec, err := r.readUser()
	r.pending = rec
	return err
}

func (r *RingBufReader[E]) consume(max int, fn func(raw []byte, lost uint64, cpu int)) int {
	if r.u == nil {
		return r.k.consume(max, fn)
	}
	n := 0
	if r.pending != nil {
		fn(r.pending, 0, 0)
		r.pending = nil
		n++
	}
	for ; n < max; n++ {
		rec, ok := r.u.Read()
		if !ok {
			break
		}
		fn(rec, 0, 0)
	}
	return n
}

func (r *RingBufReader[E]) drain() { r.SetDeadline(time.Now()) }

// Serve runs the tool until ctx ends, a program calls skelgen_stop, a
// hook fails, or (with Signals) SIGINT or SIGTERM arrives; then it
// detaches, drains the readers, runs the end hook and closes the object.
// It returns the first error (a stop with a non-zero exit code is an
// *ExitError; ctx ending is no error).
func (t *Tool) Serve(ctx context.Context) error {
	s := t.set
	begin, end, intervals, err := t.prepare()
	if err != nil {
		s.Close()
		return err
	}
	if !s.tool.CompareAndSwap(nil, t) {
		return ErrServing
	}
	defer s.tool.Store(nil)
	t.stopCh = make(chan struct{})
	t.links = map[string]link.Link{}
	t.attached = map[string]bool{}
	if t.Signals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	err = t.serve(ctx, begin, end, intervals)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

func (t *Tool) serve(ctx context.Context, begin, end *hookRun, intervals []*hookRun) error {
	if err := t.attachAtStart(); err != nil {
		return err
	}
	if begin != nil {
		if err := begin.runEmpty(); err != nil {
			t.fail(err)
			return t.result()
		}
	}
	if t.Started != nil {
		t.Started()
	}
	var waiters sync.WaitGroup
	wake := make(chan *stream, len(t.streams))
	streams, err := t.startReaders(wake, &waiters)
	if err != nil {
		t.fail(err)
	} else {
		t.loop(ctx, streams, wake, intervals)
	}
	// The readers go on reading until the programs are detached and done:
	// a record written before the detach is delivered. Only then is what
	// is left read, without waiting for more.
	if beforeDetach != nil {
		beforeDetach()
	}
	if err := t.detachAll(); err != nil {
		t.fail(err)
	}
	if t.set.Coll != nil {
		quiesce()
	}
	t.draining.Store(true)
	for _, st := range streams {
		st.rd.drain()
		close(st.armed)
	}
	waiters.Wait()
	for _, st := range streams {
		st.rd.SetDeadline(time.Now())
		for t.consume(st) > 0 || st.rd.wait() == nil {
		}
		st.rd.Close()
	}
	if end != nil {
		if err := end.runEmpty(); err != nil {
			t.fail(err)
		}
	}
	return t.result()
}

// beforeDetach, when set (by tests), runs when the tool has stopped,
// before its programs are detached.
var beforeDetach func()

// prepare finds the hooks of the loaded programs, each with run state of
// its own, and the streams to read.
func (t *Tool) prepare() (begin, end *hookRun, intervals []*hookRun, err error) {
	s := t.set
	// The hooks are the VM's part of the set: without user-space
	// programs there are none, and their reading is not compiled in.
	var hooks []loadedHook
	if s.User != nil && s.User.progs != nil {
		if hooks, err = s.User.progs.hooks(s.Spec); err != nil {
			return nil, nil, nil, err
		}
	}
	t.streams = map[string]*stream{}
	t.machines = map[any]*hookRun{}
	for name, fn := range t.handlers {
		t.streamOf(name).deliver = fn
	}
	for _, h := range hooks {
		hr := &hookRun{Hook: h.Hook, set: s, e: h.e, size: h.size}
		t.machines[h.key] = hr
		switch h.Kind {
		case HookBegin:
			begin = hr
		case HookEnd:
			end = hr
		case HookInterval:
			intervals = append(intervals, hr)
		case HookRecord:
			t.streamOf(h.Map).hook = hr
		case HookLost:
			t.streamOf(h.Map).lost = hr
		}
	}
	return begin, end, intervals, nil
}

func (t *Tool) streamOf(name string) *stream {
	st := t.streams[name]
	if st == nil {
		st = &stream{name: name}
		t.streams[name] = st
	}
	return st
}

// startReaders opens a reader on every stream with a hook or a callback
// and starts its waiter, and returns the streams it opened. In process, a
// perf event array has no records to read and is skipped.
func (t *Tool) startReaders(wake chan<- *stream, wg *sync.WaitGroup) ([]*stream, error) {
	names := make([]string, 0, len(t.streams))
	for name := range t.streams {
		names = append(names, name)
	}
	sort.Strings(names)
	var open []*stream
	for _, name := range names {
		st := t.streams[name]
		rd, err := t.set.openStream(name)
		if err != nil {
			return open, fmt.Errorf("reading %s: %w", name, err)
		}
		if rd == nil {
			continue
		}
		st.rd, st.armed = rd, make(chan struct{}, 1)
		st.each = func(raw []byte, lost uint64, cpu int) { t.record(st, raw, lost, cpu) }
		open = append(open, st)
		wg.Add(1)
		go t.wait(st, wake, wg)
	}
	return open, nil
}

// openStream opens a reader of the ring buffer or perf event array name:
// nil for a perf event array in process.
func (s *Set) openStream(name string) (streamReader, error) {
	h, err := s.mapHandle(name)
	if err != nil {
		if s.Coll == nil {
			return nil, nil // perf event arrays are not in the process
		}
		return nil, err
	}
	if h.k != nil && h.k.Type() == ebpf.PerfEventArray {
		return (&PerfEventArray[struct{}]{m: h.k, h: h}).NewReader()
	}
	return (&RingBuf[struct{}]{h: h}).NewReader()
}

// wait is a stream's waiter: each time Serve's goroutine has found the
// stream empty and arms it, it waits for a record and wakes Serve's
// goroutine, until the stream is drained.
func (t *Tool) wait(st *stream, wake chan<- *stream, wg *sync.WaitGroup) {
	defer wg.Done()
	for range st.armed {
		for {
			err := st.rd.wait()
			if err == nil {
				wake <- st // never blocks: one a stream at most
				break
			}
			if t.draining.Load() {
				return // drained, or closed
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.fail(fmt.Errorf("reading %s: %w", st.name, err))
				return
			}
		}
	}
}

// loop passes on records and runs interval hooks until the tool stops.
// It reads each stream in batches, looking at the stop and the interval
// hooks between batches; a stream it found empty waits for its next
// record in its waiter.
func (t *Tool) loop(ctx context.Context, streams []*stream, wake <-chan *stream, intervals []*hookRun) {
	ticks := make(chan *hookRun)
	quit := make(chan struct{})
	var tickers sync.WaitGroup
	defer func() {
		close(quit)
		tickers.Wait()
	}()
	for _, h := range intervals {
		tickers.Add(1)
		go func() {
			defer tickers.Done()
			tk := time.NewTicker(h.Every)
			defer tk.Stop()
			for {
				select {
				case <-tk.C:
					select {
					case ticks <- h:
					case <-quit:
						return
					}
				case <-quit:
					return
				}
			}
		}()
	}
	busy := append([]*stream(nil), streams...) // with records, maybe
	for {
		kept := busy[:0]
		for _, st := range busy {
			if t.consume(st) == batch {
				kept = append(kept, st)
			} else {
				st.armed <- struct{}{}
			}
		}
		busy = kept
		var more <-chan struct{} // nil: wait for a stream
		if len(busy) > 0 {
			more = closed
		}
		select {
		case <-ctx.Done():
			return
		case <-t.stopCh:
			return
		case st := <-wake:
			busy = append(busy, st)
		case h := <-ticks:
			t.tick(h)
		case <-more:
		}
	}
}

// closed is a closed channel: receiving from it never waits.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (t *Tool) tick(h *hookRun) {
	if err := h.runEmpty(); err != nil {
		t.fail(err)
	}
}

// consume passes a batch of the stream's records on, counted once for
// Close rather than once a record.
func (t *Tool) consume(st *stream) int {
	l := &t.set.life
	if err := l.enter(); err != nil {
		t.fail(fmt.Errorf("reading %s: %w", st.name, err))
		return 0
	}
	defer l.leave()
	return st.rd.consume(batch, st.each)
}

// record passes a record to its stream's record hook, then, unless the
// hook returned 0, to the Go callback; a lost-sample notice goes to the
// lost hook and Lost. Once the tool has failed, records are dropped. raw
// may be the ring buffer's own memory, which is not for writing: the
// hook runs over a copy in its context buffer, which the callback then
// decodes.
func (t *Tool) record(st *stream, raw []byte, lost uint64, cpu int) {
	if t.failed() {
		return
	}
	if lost > 0 {
		if st.lost != nil {
			ctx := make([]byte, max(16, st.lost.size))
			binary.NativeEndian.PutUint64(ctx, lost)
			binary.NativeEndian.PutUint32(ctx[8:], uint32(cpu))
			if _, err := st.lost.exec(ctx, uint64(len(ctx))); err != nil {
				t.fail(err)
				return
			}
		}
		if t.Lost != nil {
			t.Lost(st.name, lost)
		}
		return
	}
	if h := st.hook; h != nil {
		n := len(raw)
		size := max(n, h.size)
		if cap(st.ctx) < size {
			st.ctx = make([]byte, size)
		}
		ctx := st.ctx[:size]
		clear(ctx[copy(ctx, raw):])
		r0, err := h.run(ctx, uint64(n))
		if err != nil {
			t.fail(err)
			return
		}
		if r0 == 0 {
			return
		}
		raw = ctx
	}
	if st.deliver != nil {
		st.deliver(raw)
	}
}

// fail records err as the tool's error unless it has one, and stops it.
func (t *Tool) fail(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
		var exit *ExitError
		t.broken.Store(!errors.As(err, &exit))
	}
	t.mu.Unlock()
	t.stop()
}

// failed reports whether the tool has an error that is no exit code. It
// is asked for every record, so it reads a flag fail sets.
func (t *Tool) failed() bool { return t.broken.Load() }

func (t *Tool) result() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *Tool) stop() { t.stopOnce.Do(func() { close(t.stopCh) }) }

// attach attaches the registered program name (in process: marks it
// attached); attaching an attached program does nothing.
func (t *Tool) attach(name string) error {
	f := t.attachers[name]
	if f == nil {
		return fmt.Errorf("program %s: %w", name, errNoAttacher)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.attached[name] {
		return nil
	}
	if t.set.Coll != nil {
		lk, err := f()
		if err != nil {
			return err
		}
		t.links[name] = lk
	}
	t.attached[name] = true
	return nil
}

// attachAtStart attaches the registered programs, in order, as AttachAll
// does: not those whose autoattach is off, which stay registered for
// skelgen_attach.
func (t *Tool) attachAtStart() error {
	for _, name := range t.order {
		if t.set != nil && !(Program{set: t.set, name: name}).Autoattach() {
			continue
		}
		if err := t.attach(name); err != nil {
			return err
		}
	}
	return nil
}

var errNoAttacher = errors.New("not a program the tool attaches (its section must name its attach point)")

// detach detaches the program name; false if it was not attached.
func (t *Tool) detach(name string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.attached[name] {
		return false, nil
	}
	delete(t.attached, name)
	lk := t.links[name]
	delete(t.links, name)
	if lk == nil {
		return true, nil
	}
	return true, t.set.Links.remove(lk)
}

// detachAll closes every link of the object: the tool's and those Go code
// made with Attach methods.
func (t *Tool) detachAll() error {
	t.mu.Lock()
	clear(t.attached)
	clear(t.links)
	t.mu.Unlock()
	return t.set.Links.Close()
}
