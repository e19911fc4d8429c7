package bridge

import (
	"sync"
	"sync/atomic"
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
// A call is counted in state (enter, leave) or, for a run on a user
// program's own run state, by the flag that marks that state busy (a
// seat: take, give), which the run sets and clears anyway: so the common
// run costs two atomic operations, not four. Close counts the seats held
// when it needs the number. A seat is set before the run looks for
// closing, and Close sets closing before it looks at the seats; with
// sequentially consistent atomics one of them sees the other, so no run
// starts unseen by a Close that has begun.
type lifetime struct {
	// state is 2 × the calls in progress counted by enter, plus 1 once
	// Close has begun.
	state atomic.Int64
	// hosted counts runs inside a host function, counted or not (a
	// runtime program run through Raw is not).
	hosted atomic.Int64

	mu       sync.Mutex
	drained  chan struct{} // closed when Close need wait no longer
	drain    sync.Once
	released sync.Once
	free     func()         // releases the object; set by Close
	seats    []*atomic.Bool // see seat; guarded by mu
}

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

// seat registers b, the busy flag of a user program's own run state, as a
// seat: take and give then count runs through it.
func (l *lifetime) seat(b *atomic.Bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seats = append(l.seats, b)
}

// take claims the seat b for a run and counts the run, as enter does. It
// reports false, counting nothing, when b is held by another run or Close
// has begun: the caller then uses enter, which tells the two apart. A
// successful take is ended by give.
func (l *lifetime) take(b *atomic.Bool) bool {
	if !b.CompareAndSwap(false, true) {
		return false
	}
	if l.state.Load()&closing != 0 {
		l.give(b)
		return false
	}
	return true
}

// give ends a run counted by take.
func (l *lifetime) give(b *atomic.Bool) {
	b.Store(false)
	if n := l.state.Load(); n&closing != 0 {
		l.settle(n)
	}
}

// seated returns how many seats runs hold.
func (l *lifetime) seated() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, b := range l.seats {
		if b.Load() {
			n++
		}
	}
	return n
}

// closed reports whether Close has begun.
func (l *lifetime) closed() bool { return l.state.Load()&closing != 0 }

// settle is what a change of the counts does once Close has begun: tell
// Close when every counted call (in state or on a seat) has ended or is
// in a host function, and release the object when no call is counted any
// more. n is the state after the change.
func (l *lifetime) settle(n int64) {
	seated := l.seated()
	if n>>1+seated <= l.hosted.Load() {
		l.drain.Do(func() { close(l.drainedChan()) })
	}
	if n == closing && seated == 0 {
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
	<-l.drainedChan()
	if l.state.Load() == closing && l.seated() == 0 {
		l.release()
	}
}

// suspend marks a run as inside a host function; resume ends that and
// reports whether Close has begun meanwhile (or before).
func (l *lifetime) suspend() {
	l.hosted.Add(1)
	if n := l.state.Load(); n&closing != 0 {
		l.settle(n)
	}
}

func (l *lifetime) resume() bool {
	l.hosted.Add(-1)
	return l.closed()
}
