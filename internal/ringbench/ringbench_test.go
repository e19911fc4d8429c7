package ringbench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// TestServeAllocatesNothingPerRecord: Serve drains a kernel ring buffer
// through its record hook, and through a typed callback, with no
// allocation per record (it once copied each record, and decoded each
// into a new value). Every record arrives, with the right sum.
func TestServeAllocatesNothingPerRecord(t *testing.T) {
	testenv.Kernel(t)
	const n = 100_000
	for _, hook := range []bool{true, false} {
		tl := load(t, 64, 1<<24, hook)
		tl.fill(t, n, n)
		ctx, cancel := context.WithCancel(context.Background())
		var seen, sum uint64
		h := &RingbenchHandlers{}
		if hook {
			if err := tl.objs.Variables.Want.Set(n); err != nil {
				t.Fatal(err)
			}
		} else {
			h.OnEvents = func(r *RingbenchRec) {
				sum += r.Val
				if seen++; seen == n {
					cancel()
				}
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var err error
		testenv.NoHang(t, "Serve", time.Minute, func() { err = tl.objs.Serve(ctx, h) })
		runtime.ReadMemStats(&after)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if hook {
			seen, sum = tl.emit["seen"], tl.emit["rsum"]
		}
		if seen != n || sum != tl.emit["wsum"] {
			t.Fatalf("hook %v: %d records summing %d of %d summing %d", hook, seen, sum, n, tl.emit["wsum"])
		}
		if allocs := after.Mallocs - before.Mallocs; allocs > n/100 {
			t.Errorf("hook %v: %d allocations for %d records", hook, allocs, n)
		}
	}
}

// TestServeWraps: records written while Serve reads a ring buffer of 16
// KiB, many times its size in all, from both CPUs, all reach the record
// hook, each once; the producer counts what found no room.
func TestServeWraps(t *testing.T) {
	testenv.Kernel(t)
	tl := load(t, 64, 16<<10, true)
	if err := tl.objs.Variables.PerRun.Set(64); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- tl.objs.Serve(ctx, &RingbenchHandlers{OnStart: func() { close(started) }}) }()
	<-started
	errs := make(chan error, 2)
	for cpu := range 2 {
		go func() {
			var err error
			if e := testenv.OnCPU(cpu, func(int) {
				for range 500 {
					if _, err = tl.objs.Fill.Raw().Run(&ebpf.RunOptions{}); err != nil {
						return
					}
				}
			}); e != nil {
				err = e
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	var err error
	testenv.NoHang(t, "Serve", time.Minute, func() { err = <-done })
	if err != nil {
		t.Fatal(err)
	}
	written, lost, seen := tl.emit["written"], tl.emit["lost"], tl.emit["seen"]
	if written+lost != 2*500*64 || seen != written || tl.emit["rsum"] != tl.emit["wsum"] {
		t.Fatalf("%d written, %d lost, %d seen (sums %d, %d)", written, lost, seen, tl.emit["rsum"], tl.emit["wsum"])
	}
	t.Logf("%d written, %d lost", written, lost)
}

// TestReadIntoAllocatesNothing: the typed reader's ReadInto, reusing one
// Record, allocates nothing per record, and reads them all in order.
func TestReadIntoAllocatesNothing(t *testing.T) {
	testenv.Kernel(t)
	tl := load(t, 256, 1<<20, false)
	const n = 1000
	tl.fill(t, n, n)
	rd, err := tl.objs.Events.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var rec bridge.Record[RingbenchRec]
	var next uint64
	read := func() {
		if err := rd.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
		if rec.Value.Seq != next%(1<<20) || rec.Len != 256 {
			t.Fatalf("record %d: seq %d, %d bytes", next, rec.Value.Seq, rec.Len)
		}
		next++
	}
	read() // the first read makes rec.Raw
	if allocs := testing.AllocsPerRun(n-2, read); allocs != 0 {
		t.Errorf("%v allocations a record", allocs)
	}
}

// TestReadAllocatesNothing: the typed reader's Read and ReadRecord reuse
// the reader's buffer for the record's bytes (each once had new ones).
func TestReadAllocatesNothing(t *testing.T) {
	testenv.Kernel(t)
	tl := load(t, 256, 1<<20, false)
	const n = 1000
	tl.fill(t, n, n)
	rd, err := tl.objs.Events.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var next uint64
	read := func() {
		rec, err := rd.ReadRecord()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Value.Seq != next || rec.Len != 256 {
			t.Fatalf("record %d: seq %d, %d bytes", next, rec.Value.Seq, rec.Len)
		}
		next++
	}
	read() // the first read makes the buffer
	if allocs := testing.AllocsPerRun(n-2, read); allocs != 0 {
		t.Errorf("%v allocations a record", allocs)
	}
}
