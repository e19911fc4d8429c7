package bridge

import (
	"encoding/binary"
	"errors"
	"io"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

// hostCall calls the extern name (a __ksym function) as clang emits it.
func hostCall(name string) asm.Instruction {
	return asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: -1}.WithReference(name)
}

// userObject is an object of user programs only, each named after its
// section ubpf/<name>.
func userObject(progs map[string]asm.Instructions) *ebpf.CollectionSpec {
	spec := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}, ByteOrder: nativeOrder()}
	for name, insns := range progs {
		spec.Programs[name] = &ebpf.ProgramSpec{Name: name, SectionName: "ubpf/" + name, Type: ebpf.UnspecifiedProgram, Instructions: insns, License: "GPL"}
	}
	return spec
}

func loadUserObject(tb testing.TB, progs map[string]asm.Instructions, externs map[string]runtime.Func) *Set {
	tb.Helper()
	return loadObject(tb, userObject(progs), externs, true)
}

func loadObject(tb testing.TB, spec *ebpf.CollectionSpec, externs map[string]runtime.Func, inProcess bool) *Set {
	tb.Helper()
	s, err := Load(spec, externs, &LoadOptions{InProcess: inProcess, Output: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func bufferProgram(tb testing.TB, s *Set, name string) *BufferProgram {
	tb.Helper()
	p, err := NewBufferProgram(s, name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

var (
	returnOne = asm.Instructions{asm.Mov.Imm(asm.R0, 1), asm.Return()}
	callsHost = asm.Instructions{hostCall("host"), asm.Return()}
)

// returnOneTranslation is the translation gen/aot makes of returnOne (as
// of internal/aotbench's Overhead program).
func returnOneTranslation() runtime.Translation {
	return runtime.Translation{Insns: 2, Entry: func(m *runtime.Machine, r1, r2 uint64, b int64) (uint64, int64) {
		b -= 2
		runtime.CheckBudget(b, 1)
		return 1, b
	}}
}

// BenchmarkRun is the cost of Run around the shortest program, in the
// interpreter ("one") and translated ("one-aot"), and of a host call.
func BenchmarkRun(b *testing.B) {
	nop := func(*runtime.Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return 1, nil }
	s := loadUserObject(b, map[string]asm.Instructions{"one": returnOne, "one-aot": returnOne, "host": callsHost}, map[string]runtime.Func{"host": nop})
	for _, name := range []string{"one", "one-aot", "host"} {
		var tr func() runtime.Translation
		if name == "one-aot" {
			tr = returnOneTranslation
		}
		p, err := NewBufferProgram(s, name, tr)
		if err != nil {
			b.Fatal(err)
		}
		if p.Translated() != (tr != nil) {
			b.Fatalf("%s: Translated() = %v", name, p.Translated())
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if r0, err := p.Run(nil); err != nil || r0 != 1 {
					b.Fatal(r0, err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if r0, err := p.Run(nil); err != nil || r0 != 1 {
						b.Error(r0, err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLockedPair is what counting a run for Close would cost with
// two locked instructions, a compare-and-swap and an atomic store (an
// exchange on x86) on an uncontended flag, and nothing else; compare
// BenchmarkSeatPair.
func BenchmarkLockedPair(b *testing.B) {
	var s seatCount
	for b.Loop() {
		if !s.claim() {
			b.Fatal("the flag is set")
		}
		atomic.StoreUint32(&s.busy, 0)
	}
}

// BenchmarkSeatPair is the least that counting a run for Close costs: a
// seat's claim (a compare-and-swap) and free (a plain store on x86, an
// atomic store elsewhere), and nothing else. A typed Run cannot cost less
// than the translation's run plus this.
func BenchmarkSeatPair(b *testing.B) {
	var s seatCount
	for b.Loop() {
		if !s.claim() {
			b.Fatal("the flag is set")
		}
		s.free()
	}
}

// nativeOrder is the host's byte order as cilium/ebpf spells it.
func nativeOrder() binary.ByteOrder {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// hostFunc is a host function of a test, which ignores the registers.
type hostFunc func() (uint64, error)

func externs(fs map[string]hostFunc) map[string]runtime.Func {
	out := map[string]runtime.Func{}
	for name, f := range fs {
		out[name] = func(*runtime.Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return f() }
	}
	return out
}

// hangLimit is how long a test of Close and host functions waits before
// it calls the wait a deadlock. It detects hangs; no test measures time.
const hangLimit = 60 * time.Second

func noHang(t *testing.T, what string, f func()) {
	t.Helper()
	testenv.NoHang(t, what, hangLimit, f)
}

// TestRunFromHostFunction: a host function runs its own program again
// (on run state of its own) and another program; both return.
func TestRunFromHostFunction(t *testing.T) {
	var self, other *BufferProgram
	depth := 0
	s := loadUserObject(t, map[string]asm.Instructions{"self": callsHost, "other": returnOne}, externs(map[string]hostFunc{
		"host": func() (uint64, error) {
			if depth++; depth > 1 {
				return 1, nil
			}
			r0, err := self.Run(nil)
			if err != nil {
				return 0, err
			}
			r1, err := other.Run(nil)
			return 10*r0 + r1, err
		},
	}))
	self, other = bufferProgram(t, s, "self"), bufferProgram(t, s, "other")
	noHang(t, "Run of a program whose host function runs it again", func() {
		if r0, err := self.Run(nil); err != nil || r0 != 11 {
			t.Errorf("Run = %d, %v; want 11 (the nested run returned 1, the other program 1)", r0, err)
		}
	})
	if depth != 2 {
		t.Errorf("host function called %d times, want 2", depth)
	}
}

// TestConcurrentRunsSeats: more runs at once than a program has seats,
// all inside a host function together. Each run keeps its context's
// number on its stack across the call, so runs sharing run state would
// return each other's; every seat is held, the runs past them run on
// clones. A Close in the meantime returns, but the object is released
// only when the last run has ended: the runs on seats other than the
// first are let go last, after the others have ended.
func TestConcurrentRunsSeats(t *testing.T) {
	keeps := asm.Instructions{
		asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R6, asm.DWord),
		hostCall("host"),
		asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord),
		asm.Return(),
	}
	var (
		mu      sync.Mutex
		gates   map[*runtime.Machine]chan struct{}
		arrived sync.WaitGroup
	)
	s := loadUserObject(t, map[string]asm.Instructions{"keeps": keeps}, map[string]runtime.Func{
		"host": func(m *runtime.Machine, _, _, _, _, _ uint64) (uint64, error) {
			gate := make(chan struct{})
			mu.Lock()
			gates[m] = gate
			mu.Unlock()
			arrived.Done()
			<-gate
			return 0, nil
		},
	})
	p := bufferProgram(t, s, "keeps")
	seats := p.r.seats
	if len(seats) < 2 {
		t.Fatalf("%d seats, want at least 2", len(seats))
	}
	for _, closing := range []bool{false, true} {
		n := len(seats) + 2
		gates = map[*runtime.Machine]chan struct{}{}
		arrived.Add(n)
		r0s, errs := make([]uint64, n), make([]error, n)
		var ended atomic.Int32
		var done sync.WaitGroup
		for i := range n {
			done.Go(func() {
				ctx := binary.NativeEndian.AppendUint64(nil, uint64(100+i))
				r0s[i], errs[i] = p.Run(ctx)
				ended.Add(1)
			})
		}
		noHang(t, "runs reaching the host function together", arrived.Wait)
		later := map[*runtime.Machine]bool{}
		for i := range seats {
			if !seats[i].held() {
				t.Fatalf("seat %d free while %d runs are in progress", i, n)
			}
			if i > 0 {
				later[seats[i].e.prog.Machine()] = true
			}
		}
		if closing {
			noHang(t, "Close while every run is in a host function", func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
		for m, gate := range gates {
			if !later[m] {
				close(gate)
			}
		}
		noHang(t, "the runs off the later seats", func() {
			for int(ended.Load()) < n-len(later) {
				time.Sleep(time.Millisecond)
			}
		})
		if s.User.released.Load() {
			t.Error("released while runs on seats were in progress")
		}
		for m := range later {
			close(gates[m])
		}
		noHang(t, "the runs' return", done.Wait)
		for i := range n {
			switch {
			case closing && !errors.Is(errs[i], ErrClosed):
				t.Errorf("run %d, closed during its host call: %d, %v; want ErrClosed", i, r0s[i], errs[i])
			case !closing && (errs[i] != nil || r0s[i] != uint64(100+i)):
				t.Errorf("run %d = %d, %v; want %d", i, r0s[i], errs[i], 100+i)
			}
		}
	}
	if !s.User.released.Load() {
		t.Error("the object was not released when the last run ended")
	}
}

// TestCloseFromHostFunction: a host function closes the object of the
// program that called it. Close returns, the run fails with ErrClosed when
// the host function returns, the object is released when the run ends,
// and later runs fail with ErrClosed.
func TestCloseFromHostFunction(t *testing.T) {
	var s *Set
	var closeErr error
	released := true
	s = loadUserObject(t, map[string]asm.Instructions{"closes": callsHost, "other": returnOne}, externs(map[string]hostFunc{
		"host": func() (uint64, error) {
			closeErr = s.Close()
			released = s.User.released.Load()
			return 0, nil
		},
	}))
	p, other := bufferProgram(t, s, "closes"), bufferProgram(t, s, "other")
	noHang(t, "Close from a host function", func() {
		if _, err := p.Run(nil); !errors.Is(err, ErrClosed) {
			t.Errorf("the run that closed its object: %v, want ErrClosed", err)
		}
	})
	if closeErr != nil {
		t.Errorf("Close: %v", closeErr)
	}
	if released {
		t.Error("the object was released while a run was in progress")
	}
	if !s.User.released.Load() {
		t.Error("the object was not released when the last run ended")
	}
	for _, q := range []*BufferProgram{p, other} {
		if _, err := q.Run(nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v, want ErrClosed", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseFromOutput: the Output writer closes the object while a
// program's bpf_printk writes to it. Close returns, the run ends, and the
// object is released after it.
func TestCloseFromOutput(t *testing.T) {
	printk := asm.Instructions{
		asm.StoreImm(asm.R10, -4, 0x000a6968, asm.Word), // "hi\n\0"
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -4),
		asm.Mov.Imm(asm.R2, 4),
		asm.FnTracePrintk.Call(),
		asm.Mov.Imm(asm.R0, 1),
		asm.Return(),
	}
	w := &closingWriter{}
	s, err := Load(userObject(map[string]asm.Instructions{"printk": printk}), nil, &LoadOptions{InProcess: true, Output: w})
	if err != nil {
		t.Fatal(err)
	}
	w.s = s
	p := bufferProgram(t, s, "printk")
	noHang(t, "Close from the Output writer", func() {
		p.Run(nil)
	})
	if w.closeErr != nil || string(w.got) != "hi\n" {
		t.Errorf("the writer got %q, and Close returned %v", w.got, w.closeErr)
	}
	if !s.User.released.Load() {
		t.Error("the object was not released when the run ended")
	}
	if _, err := p.Run(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// closingWriter closes s on its first Write.
type closingWriter struct {
	s        *Set
	got      []byte
	closeErr error
}

func (w *closingWriter) Write(p []byte) (int, error) {
	w.got = append(w.got, p...)
	w.closeErr = w.s.Close()
	return len(p), nil
}

// TestRunWhileClosePending: while a Close from another goroutine is under
// way, a host function runs another program and uses a map: they fail
// with ErrClosed at once instead of waiting for Close, which waits for
// them.
func TestRunWhileClosePending(t *testing.T) {
	var s *Set
	var other *BufferProgram
	var counts *Map[uint32, uint64]
	var closed sync.WaitGroup
	var runErr, mapErr error
	spec := userObject(map[string]asm.Instructions{"outer": callsHost, "other": returnOne})
	spec.Maps["counts"] = &ebpf.MapSpec{Name: "counts", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4}
	s = loadObject(t, spec, externs(map[string]hostFunc{
		"host": func() (uint64, error) {
			closed.Go(func() { s.Close() })
			for !s.life.closed() {
				time.Sleep(time.Millisecond)
			}
			_, runErr = other.Run(nil)
			mapErr = counts.Put(1, 1)
			return 0, nil
		},
	}), true)
	other = bufferProgram(t, s, "other")
	counts, err := NewMap[uint32, uint64](s, "counts")
	if err != nil {
		t.Fatal(err)
	}
	outer := bufferProgram(t, s, "outer")
	noHang(t, "a run whose host function runs a program while Close is pending", func() {
		if _, err := outer.Run(nil); !errors.Is(err, ErrClosed) {
			t.Errorf("outer run: %v, want ErrClosed", err)
		}
		closed.Wait()
	})
	if !errors.Is(runErr, ErrClosed) {
		t.Errorf("run from the host function while closing: %v, want ErrClosed", runErr)
	}
	if !errors.Is(mapErr, ErrClosed) {
		t.Errorf("map update from the host function while closing: %v, want ErrClosed", mapErr)
	}
}

// beginClose calls l.close(free) in a goroutine of its own and returns,
// once Close has begun, a channel closed when it returns.
func beginClose(l *lifetime, free func()) <-chan struct{} {
	returned := make(chan struct{})
	go func() {
		l.close(free)
		close(returned)
	}()
	for !l.closed() {
		time.Sleep(time.Microsecond)
	}
	return returned
}

// TestCloseWaitsForCalls: Close releases the object only when the calls
// in progress have ended, and it returns once they have.
func TestCloseWaitsForCalls(t *testing.T) {
	var l lifetime
	freed := make(chan struct{})
	if err := l.enter(); err != nil {
		t.Fatal(err)
	}
	returned := beginClose(&l, func() { close(freed) })
	select {
	case <-freed:
		t.Fatal("released while a call was in progress")
	case <-returned:
		t.Fatal("Close returned while a call was in progress")
	default:
	}
	if err := l.enter(); !errors.Is(err, ErrClosed) {
		t.Errorf("enter while closing: %v, want ErrClosed", err)
	}
	l.leave()
	noHang(t, "Close after the last call ended", func() { <-returned })
	select {
	case <-freed:
	default:
		t.Error("Close returned before the release")
	}
	noHang(t, "a second Close", func() { l.close(nil) })
}

// TestCloseWaitsForSeatedRun: a run counted by its seat (the busy flag of
// a program's own run state) holds Close back as one counted by enter
// does, and no seat can be taken once Close has begun; a seated run inside
// a host function does not hold Close back, but the release waits for it.
func TestCloseWaitsForSeatedRun(t *testing.T) {
	for _, hosted := range []bool{false, true} {
		var l lifetime
		var seat, other seatCount
		l.seat(&seat)
		l.seat(&other)
		freed := make(chan struct{})
		if !l.take(&seat) {
			t.Fatal("take of a free seat failed")
		}
		if l.take(&seat) {
			t.Fatal("took a seat twice")
		}
		if hosted {
			l.suspend(&seat.hosted)
		}
		returned := beginClose(&l, func() { close(freed) })
		if hosted {
			noHang(t, "Close while the seated run is in a host function", func() { <-returned })
		}
		select {
		case <-freed:
			t.Fatal("released while a seated run was in progress")
		default:
		}
		if !hosted {
			select {
			case <-returned:
				t.Fatal("Close returned while a seated run was in progress")
			default:
			}
		}
		if l.take(&other) {
			t.Error("took a seat while closing")
		}
		if other.held() {
			t.Error("a refused take left its seat held")
		}
		if hosted && !l.resume(&seat.hosted) {
			t.Error("resume after Close did not report it")
		}
		l.give(&seat)
		noHang(t, "Close after the seated run ended", func() { <-returned; <-freed })
	}
}

// TestCloseNotFooledByRawRuns: a run Close does not count — of a
// program's Raw run state, or of a clone of it — that is inside a host
// function does not stand in for a counted run: Close waits for a counted
// run of another program that is not in a host function. The counted run
// writes its context's first byte as its last step; Close must not return
// before it.
func TestCloseNotFooledByRawRuns(t *testing.T) {
	loops := loopsAfterHost("started")
	waits := asm.Instructions{hostCall("wait"), asm.Return()}
	for _, clone := range []bool{false, true} {
		inHost, letGo, started := make(chan struct{}), make(chan struct{}), make(chan struct{})
		s := loadUserObject(t, map[string]asm.Instructions{"loops": loops, "waits": waits}, externs(map[string]hostFunc{
			"wait":    func() (uint64, error) { close(inHost); <-letGo; return 0, nil },
			"started": func() (uint64, error) { close(started); return 0, nil },
		}))
		raw := bufferProgram(t, s, "waits").Raw()
		if clone {
			raw = raw.Clone()
		} else if raw.SetTag(nil) {
			t.Error("SetTag changed the tag of the skeleton's run state")
		}
		rawErr := make(chan error)
		go func() {
			_, err := raw.Run(nil)
			rawErr <- err
		}()
		<-inHost
		if !closeDuringRun(t, s, bufferProgram(t, s, "loops"), started) {
			t.Errorf("clone %v: Close returned while a counted run was in progress, and a run of Raw's state was in a host function", clone)
		}
		close(letGo)
		if err := <-rawErr; !errors.Is(err, ErrClosed) {
			t.Errorf("clone %v: the Raw run whose host function returned after Close: %v, want ErrClosed", clone, err)
		}
	}
}

// TestHostEndsRun: a typed run whose host function panics, or ends its
// goroutine (runtime.Goexit, as t.FailNow does), does not return: the
// panic reaches Run's caller unchanged. Its seat is free afterwards, and
// it no longer counts as inside a host function, so Close waits for the
// next run on that seat and not for the ended one.
func TestHostEndsRun(t *testing.T) {
	type hostPanic struct{}
	for _, how := range []string{"panic", "goexit"} {
		t.Run(how, func(t *testing.T) {
			first, started := true, make(chan struct{})
			s := loadUserObject(t, map[string]asm.Instructions{"loops": loopsAfterHost("host")}, externs(map[string]hostFunc{
				"host": func() (uint64, error) {
					if first {
						first = false
						if how == "panic" {
							panic(hostPanic{})
						}
						goruntime.Goexit()
					}
					close(started)
					return 0, nil
				},
			}))
			p := bufferProgram(t, s, "loops")
			ended := make(chan any)
			go func() {
				defer func() { ended <- recover() }()
				p.Run(make([]byte, 1))
				t.Errorf("Run returned after its host function's %s", how)
			}()
			if got, want := <-ended, map[string]any{"panic": hostPanic{}, "goexit": nil}[how]; got != want {
				t.Errorf("Run's caller recovered %v, want %v", got, want)
			}
			if !closeDuringRun(t, s, p, started) {
				t.Error("Close returned while a run was in progress: the ended run's seat was not given back, or it still counted as inside a host function")
			}
		})
	}
}

// loopsAfterHost is a program that calls the host function host, then
// loops 4 million times and writes its context's first byte as its last
// step.
func loopsAfterHost(host string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		hostCall(host),
		asm.Mov.Imm(asm.R0, 0),
		asm.Add.Imm(asm.R0, 1).WithSymbol("loop"),
		asm.JLT.Imm(asm.R0, 4_000_000, "loop"),
		asm.StoreImm(asm.R6, 0, 1, asm.Byte),
		asm.Return(),
	}
}

// closeDuringRun runs p (a loopsAfterHost program) over a one-byte
// context from another goroutine, closes s once p has left the host
// function that closed started, and reports whether the run had written
// its context's byte by the time Close returned: whether Close waited for
// it.
func closeDuringRun(t *testing.T, s *Set, p *BufferProgram, started <-chan struct{}) bool {
	t.Helper()
	ctx := make([]byte, 1)
	runErr := make(chan error)
	go func() {
		_, err := p.Run(ctx)
		runErr <- err
	}()
	<-started
	// The run closed started inside a host function, which Close does
	// not wait for (a run there fails with ErrClosed when it returns):
	// Close is to come once the run has left it for its loop.
	for deadline := time.Now().Add(10 * time.Second); ; goruntime.Gosched() {
		if _, running := s.life.seated(); running > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not leave its host function in 10 s")
		}
	}
	noHang(t, "Close", func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	waited := ctx[0] == 1
	if err := <-runErr; err != nil {
		t.Errorf("the run Close came during: %v", err)
	}
	return waited
}

// TestCloseWhileRunsRace: goroutines take seats or enter and leave in a
// loop, some of their calls going into a host function and back, while
// Close comes; none may be inside a counted call, in a host function or
// not, once the object is released. Run it with -race.
func TestCloseWhileRunsRace(t *testing.T) {
	for range 20 {
		var l lifetime
		var freed atomic.Bool
		seats := make([]seatCount, 3)
		for i := range seats {
			l.seat(&seats[i])
		}
		var wg sync.WaitGroup
		var bad atomic.Int64
		for g := range 6 {
			wg.Go(func() {
				for i := range 1 << 20 {
					// Some calls go into a host function and back.
					host := func(h *atomic.Int32) {
						if i%3 == 0 {
							l.suspend(h)
							if freed.Load() {
								bad.Add(1)
							}
							l.resume(h)
						}
					}
					switch seat := &seats[g%len(seats)]; {
					case l.take(seat):
						host(&seat.hosted)
						if freed.Load() {
							bad.Add(1)
						}
						l.give(seat)
					case l.enter() == nil:
						host(&l.hosted)
						if freed.Load() {
							bad.Add(1)
						}
						l.leave()
					default:
						return
					}
				}
			})
		}
		time.Sleep(time.Millisecond)
		noHang(t, "Close while calls come and go", func() {
			l.close(func() { freed.Store(true) })
			wg.Wait()
		})
		if bad.Load() != 0 {
			t.Fatalf("%d counted calls saw the object released", bad.Load())
		}
		if !freed.Load() {
			t.Fatal("not released after every call ended")
		}
	}
}

// TestCloseSeesLateGive: a run frees its seat as Close begins but misses
// closing, as a plain store followed by the run's load of state can (see
// lifetime): it tells Close nothing. Close must see the seat free all the
// same, return and release the object.
func TestCloseSeesLateGive(t *testing.T) {
	var l lifetime
	var s seatCount
	l.seat(&s)
	if !l.take(&s) {
		t.Fatal("take of a free seat failed")
	}
	var freed atomic.Bool
	done := beginClose(&l, func() { freed.Store(true) })
	select {
	case <-done:
		t.Fatal("Close returned while a run held its seat")
	case <-time.After(5 * time.Millisecond):
	}
	s.free() // give without its look at state
	noHang(t, "Close after a give that missed closing", func() { <-done })
	if !freed.Load() {
		t.Error("the object was not released")
	}
}

// TestCloseSeesSeatRetaken: a run gives its seat back, another run takes
// it before Close begins, and the first run's give then sees closing.
// The give must not mark the seat free again: the second run still holds
// it, and the object must outlive that run.
func TestCloseSeesSeatRetaken(t *testing.T) {
	var l lifetime
	var s seatCount
	l.seat(&s)
	if !l.take(&s) {
		t.Fatal("take of a free seat failed")
	}
	s.free() // the first run's give, up to its look at state
	if !l.take(&s) {
		t.Fatal("the second run could not take the seat given back")
	}
	var freed atomic.Bool
	done := beginClose(&l, func() { freed.Store(true) })
	_ = l.gaveClosing(&s) // the rest of the first run's give: it saw closing
	select {
	case <-done:
		t.Fatal("Close returned while the second run held its seat")
	case <-time.After(5 * time.Millisecond):
	}
	if freed.Load() {
		t.Fatal("the object was released while the second run held its seat")
	}
	l.give(&s)
	noHang(t, "Close after the second run's give", func() { <-done })
	if !freed.Load() {
		t.Error("the object was not released")
	}
}

// TestKernelMapsAfterClose: typed calls on kernel maps, and a ring buffer
// reader, return ErrClosed after Close, not the errors of a closed file
// descriptor; a Read blocked when Close comes returns ErrClosed too.
func TestKernelMapsAfterClose(t *testing.T) {
	testenv.Kernel(t)
	spec := userObject(nil)
	spec.Maps["h"] = &ebpf.MapSpec{Name: "h", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4}
	spec.Maps["pc"] = &ebpf.MapSpec{Name: "pc", Type: ebpf.PerCPUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4}
	spec.Maps["rb"] = &ebpf.MapSpec{Name: "rb", Type: ebpf.RingBuf, MaxEntries: 4096}
	s := loadObject(t, spec, nil, false)
	h, err := NewMap[uint32, uint64](s, "h")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := NewPerCPUMap[uint32, uint64](s, "pc")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := NewRingBuf[uint64](s, "rb")
	if err != nil {
		t.Fatal(err)
	}
	if h.Raw() == nil {
		t.Fatal("map h is not a kernel map")
	}
	if err := h.Put(1, 2); err != nil {
		t.Fatal(err)
	}
	rd, err := rb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := rd.Read()
		readErr <- err
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	noHang(t, "a ring buffer Read blocked when Close came", func() {
		if err := <-readErr; !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Read: %v, want ErrClosed", err)
		}
	})
	var iterErr error
	for range h.All(&iterErr) {
		t.Error("All yields an entry after Close")
	}
	_, keysErr := Keys(h)
	_, lookupErr := h.Lookup(1)
	_, lookupDeleteErr := h.LookupAndDelete(1)
	_, batchUpdateErr := BatchUpdate(h, []uint32{1}, []uint64{1}, ebpf.UpdateAny)
	_, batchDeleteErr := BatchDelete(h, []uint32{1})
	_, batchLookupErr := BatchLookup(h, new(ebpf.MapBatchCursor), make([]uint32, 1), make([]uint64, 1))
	_, pcLookupErr := pc.Lookup(1)
	var pcIterErr error
	for range pc.All(&pcIterErr) {
		t.Error("per-CPU All yields an entry after Close")
	}
	_, newReaderErr := rb.NewReader()
	_, readAfterErr := rd.Read()
	for name, err := range map[string]error{
		"All": iterErr, "Keys": keysErr, "Lookup": lookupErr, "Put": h.Put(1, 3), "Delete": h.Delete(1),
		"LookupAndDelete": lookupDeleteErr, "BatchUpdate": batchUpdateErr, "BatchDelete": batchDeleteErr,
		"BatchLookup": batchLookupErr, "per-CPU Lookup": pcLookupErr, "per-CPU Update": pc.Update(1, []uint64{1}, ebpf.UpdateAny),
		"per-CPU Delete": pc.Delete(1), "per-CPU All": pcIterErr, "NewReader": newReaderErr, "Read": readAfterErr,
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

// TestUserProgramMadeTwice: making a program's runs a second time returns
// the first runs, which own the program's run state, and fails when the
// two disagree on the translation.
func TestUserProgramMadeTwice(t *testing.T) {
	s := loadUserObject(t, map[string]asm.Instructions{"one": returnOne}, nil)
	p, q := bufferProgram(t, s, "one"), bufferProgram(t, s, "one")
	if p.r != q.r {
		t.Error("a second NewBufferProgram made new runs over the same run state")
	}
	if _, err := NewBufferProgram(s, "one", returnOneTranslation); err == nil || !strings.Contains(err.Error(), "already made without its translation") {
		t.Errorf("NewBufferProgram with a translation after one without: %v", err)
	}
	if r0, err := q.Run(nil); err != nil || r0 != 1 {
		t.Errorf("Run = %d, %v", r0, err)
	}
}
