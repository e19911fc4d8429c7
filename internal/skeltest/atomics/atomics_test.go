package atomics

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/skelgen/skelgen/internal/testenv"
)

// stressTime is how long each engine runs in TestKernelSharedCounter: a
// few seconds, or ten with SKELGEN_STRESS set.
func stressTime() time.Duration {
	if os.Getenv("SKELGEN_STRESS") != "" {
		return 10 * time.Second
	}
	return 3 * time.Second
}

// engine runs a program in the translation (the skeleton's Run) or the
// interpreter. newRun returns a function that runs it once; each goroutine
// asks for its own.
type engine[C any] struct {
	name   string
	newRun func() func(C) (uint64, error)
}

// TestKernelSharedCounter: the kernel program adds each getppid call of
// this process to hits with an atomic add while drain, in the Go process,
// empties hits into drained with an atomic exchange, both on the .bss the
// kernel maps into the process. Callers and drainers run at once; at the
// end every call must be in drained or still in hits.
func TestKernelSharedCounter(t *testing.T) {
	testenv.Kernel(t)
	spec, err := LoadAtomicsSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if !objs.Drain.Translated() {
		t.Fatal("the skeleton was generated without translations (-aot)")
	}
	l, err := objs.CountGetppid.Attach()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The first translated drainer runs through the skeleton, the others
	// through their own clones of the program, bound to the translation:
	// the skeleton runs one call of a program at a time.
	var drainN atomic.Int32
	engines := []engine[struct{}]{
		{"translation", func() func(struct{}) (uint64, error) {
			if drainN.Add(1) == 1 {
				return func(struct{}) (uint64, error) { return objs.Drain.Run(nil) }
			}
			c, err := objs.Drain.Raw().Clone().Bind(atomicsDrainTranslation())
			if err != nil {
				t.Fatal(err)
			}
			return func(struct{}) (uint64, error) { return c.Run(nil) }
		}},
		{"interpreter", func() func(struct{}) (uint64, error) {
			p := objs.Drain.Raw().Clone()
			return func(struct{}) (uint64, error) { return p.Run(nil) }
		}},
	}
	const callers, drainers = 3, 2
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if err := objs.Variables.Hits.Set(0); err != nil {
				t.Fatal(err)
			}
			if err := objs.Variables.Drained.Set(0); err != nil {
				t.Fatal(err)
			}
			var calls atomic.Uint64
			var stop atomic.Bool
			var wg, calling sync.WaitGroup
			errs := make(chan error, drainers)
			deadline := time.Now().Add(stressTime())
			for range callers {
				calling.Go(func() {
					n := uint64(0)
					for time.Now().Before(deadline) {
						for range 256 {
							syscall.Getppid()
						}
						n += 256
					}
					calls.Add(n)
				})
			}
			for range drainers {
				run := e.newRun()
				wg.Go(func() {
					for !stop.Load() {
						if _, err := run(struct{}{}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			calling.Wait()
			stop.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			hits, err := objs.Variables.Hits.Get()
			if err != nil {
				t.Fatal(err)
			}
			drained, err := objs.Variables.Drained.Get()
			if err != nil {
				t.Fatal(err)
			}
			n := calls.Load()
			lost := int64(n) - int64(drained) - int64(hits)
			t.Logf("%d calls, %d drained, %d left in hits, %d lost", n, drained, hits, lost)
			if lost != 0 {
				t.Errorf("calls %d != drained %d + hits %d: %d lost", n, drained, hits, lost)
			}
			if drained == 0 {
				t.Error("the drainers took nothing while the calls went on")
			}
		})
	}
}

// counters mirrors struct counters of atomics.bpf.c.
type counters struct {
	hits, drained  uint64
	hits32, pad    uint32
	cas, drained32 uint64
	parity         uint64
}

// TestBufferAtomics runs the bump programs and take on one buffer from
// several goroutines at once, without the kernel: no update may be lost.
// With -race it also shows that every access to the shared bytes is atomic.
func TestBufferAtomics(t *testing.T) {
	objs, err := LoadAtomics(&AtomicsLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if !objs.BumpA.Translated() || !objs.Take.Translated() {
		t.Fatal("the skeleton was generated without translations (-aot)")
	}
	// Through the skeleton a program runs one call at a time, so the
	// translation's bumpers alternate between bump_a and bump_b; the
	// interpreter's are clones, each with its own run state.
	var bumpN atomic.Int32
	bumps := []engine[[]byte]{
		{"translation", func() func([]byte) (uint64, error) {
			if bumpN.Add(1)%2 == 0 {
				return objs.BumpA.Run
			}
			return objs.BumpB.Run
		}},
		{"interpreter", func() func([]byte) (uint64, error) { return objs.BumpA.Raw().Clone().Run }},
	}
	takes := []engine[[]byte]{
		{"translation", func() func([]byte) (uint64, error) { return objs.Take.Run }},
		{"interpreter", func() func([]byte) (uint64, error) { return objs.Take.Raw().Clone().Run }},
	}
	const bumpers, takers, runs = 4, 2, 20000
	for i := range bumps {
		t.Run(bumps[i].name, func(t *testing.T) {
			var c counters
			buf := unsafe.Slice((*byte)(unsafe.Pointer(&c)), unsafe.Sizeof(c))
			var wg, bumping sync.WaitGroup
			var stop atomic.Bool
			errs := make(chan error, bumpers+takers)
			check := func(r0 uint64, err error) bool {
				if err == nil && r0 != 0 {
					err = errShort
				}
				if err != nil {
					errs <- err
				}
				return err == nil
			}
			for range bumpers {
				run := bumps[i].newRun()
				bumping.Go(func() {
					for range runs {
						if !check(run(buf)) {
							return
						}
					}
				})
			}
			for range takers {
				run := takes[i].newRun()
				wg.Go(func() {
					for !stop.Load() && check(run(buf)) {
					}
				})
			}
			bumping.Wait()
			stop.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			const total = bumpers * runs
			hits, drained := atomic.LoadUint64(&c.hits), atomic.LoadUint64(&c.drained)
			hits32, drained32 := uint64(atomic.LoadUint32(&c.hits32)), atomic.LoadUint64(&c.drained32)
			t.Logf("%d bumps: 64-bit %d taken + %d left, 32-bit %d taken + %d left", total, drained, hits, drained32, hits32)
			if hits+drained != total {
				t.Errorf("64-bit: %d taken + %d left, want %d in all", drained, hits, total)
			}
			if hits32+drained32 != total {
				t.Errorf("32-bit: %d taken + %d left, want %d in all", drained32, hits32, total)
			}
			if n := atomic.LoadUint64(&c.cas); n != total {
				t.Errorf("compare-and-exchange counter %d, want %d", n, total)
			}
			if p := atomic.LoadUint64(&c.parity); p != 0 {
				t.Errorf("parity %d after an even number of xors, want 0", p)
			}
		})
	}
}

var errShort = errors.New("the program found the buffer too short")
