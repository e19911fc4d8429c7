package bridge_test

import (
	"context"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/skeltest/hooks"
	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// TestServeDeliversUntilDetach: the kernel writes a record on every
// getppid of this process, at a pace, while Serve stops, and the programs stay
// attached a few milliseconds after the stop (as on a busy machine). Every
// record the kernel wrote reaches the record hook: the readers read until
// the programs are detached, not only until the stop. Ten times.
func TestServeDeliversUntilDetach(t *testing.T) {
	testenv.Kernel(t)
	defer bridge.SetBeforeDetach(func() { time.Sleep(5 * time.Millisecond) })()
	for run := range 10 {
		spec, err := hooks.LoadHooksSpec()
		if err != nil {
			t.Fatal(err)
		}
		if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		emitted := map[string]int64{}
		objs, err := spec.Load(&hooks.HooksLoadOptions{Output: io.Discard, Records: func(name string, v int64) {
			mu.Lock()
			emitted[name] = v
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					syscall.Getppid()
					// A pace the reader keeps up with: it waits for
					// records, not for Serve's goroutine.
					for range 2000 {
						syscall.Getpid()
					}
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		testenv.NoHang(t, "Serve", time.Minute, func() {
			err = objs.Serve(ctx, &hooks.HooksHandlers{OnEvents: func(*hooks.HooksEvent) {
				if n++; n == 20+5*run {
					cancel()
				}
			}})
		})
		cancel()
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		produced, seen := emitted["produced"], emitted["seen"]
		mu.Unlock()
		if produced == 0 || seen != produced {
			t.Fatalf("run %d: the record hook saw %d of the %d records the kernel wrote", run, seen, produced)
		}
	}
}
