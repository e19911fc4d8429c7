package hostile

import (
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// hangLimit is how long TestStress waits for Close and for its goroutines
// before it calls the wait a deadlock (a hang detector, not a timing).
const hangLimit = 60 * time.Second

// stressTime is how long each mode of TestStress runs: SKELGEN_STRESS (a
// Go duration), 2s by default. CI runs it under -race for 30s; run it for
// 10m locally after changing the runtime's maps.
func stressTime(t *testing.T) time.Duration {
	if v := os.Getenv("SKELGEN_STRESS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SKELGEN_STRESS=%q: %v", v, err)
		}
		return d
	}
	return 2 * time.Second
}

// TestStress mixes, on one user-space map: the typed Run of a program that
// bumps, reads back and deletes keys (translation), the same run started
// from a host function (of another program, or of that program run again
// from its own host function), clones of it in the interpreter, and Go
// calls (Put, Lookup, Delete, LookupAndDelete, All, Keys, BatchUpdate,
// BatchDelete) from other goroutines, plus a variable read and written
// from Go. Keys 1000..1063 belong to one Go goroutine alone, which checks
// that it reads back exactly what it wrote, and keys 2000..2031 to one
// that updates and deletes them in batches; iteration must end. Under
// -race any unsynchronised access fails the test.
//
// It runs in two halves: after the first, every goroutine stops and the
// owned keys are checked; in the second, Close comes while everything
// runs. Close must return, and every goroutine must then end with
// ErrClosed; a deadlock ends the test with every goroutine's stack.
func TestStress(t *testing.T) {
	d := stressTime(t)
	for _, md := range modes {
		t.Run(md.name, func(t *testing.T) {
			objs, host := loadHost(t, md, HostileLoadOptions{})
			var runs, ops atomic.Int64
			var stop chan struct{}
			var wg sync.WaitGroup
			var closing atomic.Bool
			fail := func(format string, args ...any) {
				t.Errorf(format, args...)
			}
			// ended reports that err is ErrClosed after Close began.
			ended := func(err error) bool {
				return closing.Load() && (errors.Is(err, bridge.ErrClosed) || errors.Is(err, runtime.ErrClosed))
			}
			var workers []func(r *rand.Rand) bool
			goroutine := func(f func(r *rand.Rand) bool) { workers = append(workers, f) }
			start := func() {
				stop = make(chan struct{})
				for _, f := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(rand.Uint64(), 1))
						for {
							select {
							case <-stop:
								return
							default:
							}
							if !f(r) {
								return
							}
						}
					}()
				}
			}
			for range 2 {
				goroutine(func(r *rand.Rand) bool {
					c := HostileBumpCtx{Key: r.Uint32N(256), Del: r.Uint32N(4) / 3}
					if _, err := objs.Bump.Run(&c); ended(err) {
						return false
					} else if err != nil {
						fail("typed Run: %v", err)
						return false
					}
					runs.Add(1)
					return true
				})
			}
			// via_host runs bump, or itself and then bump, from its host
			// function.
			goroutine(func(r *rand.Rand) bool {
				c := HostileBumpCtx{Key: r.Uint32N(256), Del: r.Uint32N(3)}
				if _, err := objs.ViaHost.Run(&c); ended(err) {
					return false
				} else if err != nil {
					fail("via_host Run: %v", err)
					return false
				}
				if c.Seen == 0 {
					fail("via_host of key %d at depth %d read back 0: %v", c.Key, c.Del, host.failure())
					return false
				}
				runs.Add(1)
				return true
			})
			for range 2 {
				clone := objs.Bump.Raw().Clone()
				var c HostileBumpCtx
				ctx := unsafe.Slice((*byte)(unsafe.Pointer(&c)), unsafe.Sizeof(c))
				goroutine(func(r *rand.Rand) bool {
					c = HostileBumpCtx{Key: r.Uint32N(256), Del: r.Uint32N(4) / 3}
					if _, err := clone.Run(ctx); ended(err) {
						return false
					} else if err != nil {
						fail("clone Run: %v", err)
						return false
					}
					if c.Del == 0 && c.Seen == 0 {
						fail("bump of key %d read back 0", c.Key)
						return false
					}
					runs.Add(1)
					return true
				})
			}
			mine := map[uint32]uint64{}
			goroutine(func(r *rand.Rand) bool {
				k := 1000 + r.Uint32N(64)
				switch r.IntN(4) {
				case 0, 1:
					v := r.Uint64()
					if err := objs.Counts.Put(k, v); ended(err) {
						return false
					} else if err != nil {
						fail("Put: %v", err)
						return false
					}
					mine[k] = v
				case 2:
					err := objs.Counts.Delete(k)
					if ended(err) {
						return false
					}
					if _, ok := mine[k]; ok != (err == nil) {
						fail("Delete(%d): %v, key owned: %v", k, err, ok)
						return false
					}
					delete(mine, k)
				case 3:
					v, err := objs.Counts.LookupAndDelete(k)
					if ended(err) {
						return false
					}
					want, ok := mine[k]
					if ok != (err == nil) || ok && v != want {
						fail("LookupAndDelete(%d) = %d, %v; want %d (present %v)", k, v, err, want, ok)
						return false
					}
					delete(mine, k)
				}
				for k, want := range mine {
					v, err := objs.Counts.Lookup(k)
					if ended(err) {
						return false
					}
					if err != nil || v != want {
						fail("Lookup(%d) = %d, %v; want %d", k, v, err, want)
						return false
					}
					break
				}
				ops.Add(2)
				return true
			})
			goroutine(func(r *rand.Rand) bool {
				var err error
				seen := map[uint32]bool{}
				// A restart after a concurrent delete may repeat keys, as
				// in the kernel, so only distinct keys are bounded.
				for k := range objs.Counts.All(&err) {
					seen[k] = true
					if len(seen) > 4096 {
						fail("iteration yields more than max_entries keys")
						return false
					}
					ops.Add(1)
				}
				if ended(err) {
					return false
				}
				if err != nil && !errors.Is(err, ebpf.ErrIterationAborted) {
					fail("All: %v", err)
					return false
				}
				if _, err := bridge.Keys(objs.Counts); ended(err) {
					return false
				} else if err != nil && !errors.Is(err, ebpf.ErrIterationAborted) {
					fail("Keys: %v", err)
					return false
				}
				ops.Add(1)
				return true
			})
			// Batches over keys 2000..2031, which nothing else touches.
			batchKeys := make([]uint32, 32)
			batchVals := make([]uint64, 32)
			for i := range batchKeys {
				batchKeys[i] = 2000 + uint32(i)
			}
			goroutine(func(r *rand.Rand) bool {
				for i := range batchVals {
					batchVals[i] = r.Uint64()
				}
				if n, err := bridge.BatchUpdate(objs.Counts, batchKeys, batchVals, ebpf.UpdateAny); ended(err) {
					return false
				} else if err != nil || n != 32 {
					fail("BatchUpdate: %d, %v", n, err)
					return false
				}
				k := r.IntN(32)
				if v, err := objs.Counts.Lookup(batchKeys[k]); ended(err) {
					return false
				} else if err != nil || v != batchVals[k] {
					fail("Lookup(%d) after BatchUpdate = %d, %v; want %d", batchKeys[k], v, err, batchVals[k])
					return false
				}
				if n, err := bridge.BatchDelete(objs.Counts, batchKeys); ended(err) {
					return false
				} else if err != nil || n != 32 {
					fail("BatchDelete: %d, %v", n, err)
					return false
				}
				ops.Add(3)
				return true
			})
			goroutine(func(r *rand.Rand) bool {
				v := r.Uint64()
				if err := objs.Variables.KernelHits.Set(v); ended(err) {
					return false
				} else if err != nil {
					fail("Set: %v", err)
					return false
				}
				if _, err := objs.Variables.KernelHits.Get(); ended(err) {
					return false
				} else if err != nil {
					fail("Get: %v", err)
					return false
				}
				ops.Add(2)
				return true
			})
			start()
			time.Sleep(d / 2)
			close(stop)
			testenv.NoHang(t, "the goroutines of the first half", hangLimit, wg.Wait)
			// The owned keys hold what their owner wrote last.
			for k, want := range mine {
				if v, err := objs.Counts.Lookup(k); err != nil || v != want {
					t.Errorf("after the run: Lookup(%d) = %d, %v; want %d", k, v, err, want)
				}
			}
			start()
			time.Sleep(d / 2)
			closing.Store(true)
			testenv.NoHang(t, "Close while programs run", hangLimit, func() {
				if err := objs.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			// After Close every call fails, so the goroutines end alone.
			testenv.NoHang(t, "the goroutines after Close", hangLimit, wg.Wait)
			close(stop)
			t.Logf("%s: %v, %d program runs, %d Go map and variable operations", md.name, d, runs.Load(), ops.Load())
		})
	}
}
