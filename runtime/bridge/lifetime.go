package bridge

import (
	"sync"
	"sync/atomic"
	"time"
)

// lifetime orders Close after the calls that use a loaded object: runs of
// its user programs and typed calls on its maps and variables. Each such
// call is counted while it goes on; Close marks the object closing, after
// which calls fail with ErrClosed at once instead of waiting, and the
// object's memory and file descriptors are released when the last counted
// call has ended — by Close itself, or by that call.
//
// Host functions are Go code that a run calls in the middle; they may call
// Close, or Run of the same or another program. So while a run is inside a
// host function it does not hold Close back: Close waits only until every
// counted call has ended or is inside a host function, and returns. A run
// whose host function returns after Close fails with ErrClosed at that
// call, and the release waits for it to end, so no run ever sees its
// memory go away. Nothing here blocks a call while Close is pending, which
// is why this is not a sync.RWMutex: its waiting writer blocks new readers,
// and a reader that waits inside a host function for another reader then
// waits for ever.
//
// A call is counted in state (enter, leave) or, for a run on one of a
// user program's seats (its run states that runs take in turn), by the
// flag that marks the seat busy (take, give), which the run sets and
// clears anyway: so the common run costs one compare-and-swap and one
// store, not four atomic operations. Close counts the seats held when it
// needs the number. A seat is set before the run looks for closing, and
// Close sets closing before it looks at the seats; with sequentially
// consistent atomics one of them sees the other, so no run starts unseen
// by a Close that has begun.
//
// Giving a seat back need not be seen at once. On x86 processors the
// store that frees it is a plain store (seatCount.free), which needs no
// locked instruction; its run's own loads and stores are done before any
// other processor sees it, but the run's next load (of state, to look for
// closing) may be answered before it. So a run ending as Close begins can
// miss closing while Close still sees its seat held: Close then looks at
// the seats again after a short wait (wait), by when the store is seen.
// A give that sees closing makes its store seen (a locked store) before
// it counts the seats, so that of two runs ending after Close at least
// one sees the other's seat free and releases the object.
//
// A counted run inside a host function says so on a counter of its own
// kind: its seat's, or hosted for runs counted in state. The host
// function finds the counter through the run state's tag
// (runtime.Machine.Tag), so runs that Close does not count — of a
// program's Raw run state or of its clones — change no counter.
type lifetime struct {
	// state is 2 × the calls in progress counted by enter, plus 1 once
	// Close has begun.
	state atomic.Int64
	// hosted counts the runs counted in state that are inside a host
	// function.
	hosted atomic.Int32

	mu       sync.Mutex
	drained  chan struct{} // closed when Close need wait no longer
	drain    sync.Once
	released sync.Once
	free     func()       // releases the object; set by Close
	seats    []*seatCount // see seat; guarded by mu
}

// seatCount is what a seat tells Close: whether a run holds it, and
// whether that run is inside a host function.
type seatCount struct {
	busy   uint32 // 1 while a run holds the seat; see claim, free, held
	hosted atomic.Int32
}

// claim takes the seat for a run, reporting false when a run holds it.
func (b *seatCount) claim() bool { return atomic.CompareAndSwapUint32(&b.busy, 0, 1) }

// held reports whether a run holds the seat.
func (b *seatCount) held() bool { return atomic.LoadUint32(&b.busy) != 0 }

const closing = 1

// enter counts a call that uses the object, or fails with ErrClosed when
// Close has begun. A successful enter is ended by leave.
func (l *lifetime) enter() error {
	if l.state.Add(2)&closing != 0 {
		l.leave()
		return ErrClosed
	}
	return nil
}

// leave ends a call counted by enter.
func (l *lifetime) leave() {
	if n := l.state.Add(-2); n&closing != 0 {
		l.settle(n)
	}
}

// seat registers b, the counts of one of a user program's seats: take and
// give then count runs through it.
func (l *lifetime) seat(b *seatCount) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seats = append(l.seats, b)
}

// take claims the seat b for a run and counts the run, as enter does. It
// reports false, counting nothing, when b is held by another run or Close
// has begun: the caller then uses enter, which tells the two apart. A
// successful take is ended by give.
func (l *lifetime) take(b *seatCount) bool { return b.claim() && l.admit(b) }

// admit is the rest of take, once b is claimed: it reports whether Close
// has not begun, else gives b back. admit and give are small enough for
// the Go compiler to inline them (take is not: a typed Run writes it
// out); what only a Close makes them do is in gaveClosing.
func (l *lifetime) admit(b *seatCount) bool {
	if l.state.Load()&closing == 0 {
		return true
	}
	b.free()
	return l.gaveClosing(b)
}

// give ends a run counted by take.
func (l *lifetime) give(b *seatCount) {
	b.free()
	if l.state.Load()&closing != 0 {
		_ = l.gaveClosing(b)
	}
}

// gaveClosing is the rest of a give that saw closing, once b.free has
// given the seat back. It returns false, what take returns then.
// Not inlined, so that take and give are.
//
//go:noinline
func (l *lifetime) gaveClosing(b *seatCount) bool {
	// A locked instruction: the free is seen by every processor before
	// the seats are counted. It must not store: another run may have
	// claimed the seat since the free, before Close began, and a store
	// of 0 would hide that run from Close, which would release the
	// object under it.
	atomic.AddUint32(&b.busy, 0)
	l.settle(l.state.Load())
	return false
}

// seated returns how many seats runs hold, and how many of those runs are
// not inside a host function.
func (l *lifetime) seated() (held, running int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.seats {
		if b.held() {
			held++
			if b.hosted.Load() == 0 {
				running++
			}
		}
	}
	return held, running
}

// closed reports whether Close has begun.
func (l *lifetime) closed() bool { return l.state.Load()&closing != 0 }

// settle is what a change of the counts does once Close has begun: tell
// Close when every counted call (in state or on a seat) has ended or is
// in a host function, and release the object when no call is counted any
// more. n is the state after the change.
func (l *lifetime) settle(n int64) {
	held, running := l.seated()
	if running == 0 && n>>1 <= int64(l.hosted.Load()) {
		l.drain.Do(func() { close(l.drainedChan()) })
	}
	if n == closing && held == 0 {
		l.release()
	}
}

func (l *lifetime) drainedChan() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drained == nil {
		l.drained = make(chan struct{})
	}
	return l.drained
}

func (l *lifetime) release() {
	l.released.Do(func() {
		l.mu.Lock()
		free := l.free
		l.mu.Unlock()
		if free != nil {
			free()
		}
	})
}

// close begins closing: later calls fail, and free runs once no call is
// counted. It waits until every counted call has ended or is inside a
// host function; when none is left by then, free has run when it returns.
func (l *lifetime) close(free func()) {
	l.mu.Lock()
	if l.free == nil {
		l.free = free
	}
	l.mu.Unlock()
	l.settle(l.state.Or(closing) | closing)
	l.wait()
	if held, _ := l.seated(); held == 0 && l.state.Load() == closing {
		l.release()
	}
}

// wait returns once Close need wait no longer. A run that gave its seat
// back as Close began may not have seen closing, and so not have told
// Close (see lifetime): wait looks at the seats again after a short
// while, then less and less often.
func (l *lifetime) wait() {
	drained := l.drainedChan()
	t := time.NewTimer(10 * time.Microsecond)
	defer t.Stop()
	for d := 10 * time.Microsecond; ; d = min(2*d, 10*time.Millisecond) {
		select {
		case <-drained:
			return
		case <-t.C:
			l.settle(l.state.Load())
			t.Reset(d)
		}
	}
}

// suspend marks a run as inside a host function, on h: its seat's
// counter, or hosted for a run counted in state. resume ends that and
// reports whether Close has begun meanwhile (or before).
func (l *lifetime) suspend(h *atomic.Int32) {
	h.Add(1)
	if n := l.state.Load(); n&closing != 0 {
		l.settle(n)
	}
}

func (l *lifetime) resume(h *atomic.Int32) bool {
	h.Add(-1)
	return l.closed()
}
