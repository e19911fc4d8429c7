package ringbench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// tool is one loaded object, what its end hook emitted, and a ring
// buffer filled by its kernel program.
type tool struct {
	objs *RingbenchObjects
	mu   sync.Mutex
	emit map[string]uint64
}

// load loads the object for records of size bytes in a ring buffer of
// ring bytes (0: the object's 64 MiB); hook false switches the record
// hook off.
func load(tb testing.TB, size uint32, ring uint32, hook bool) *tool {
	tb.Helper()
	spec, err := LoadRingbenchSpec()
	if err != nil {
		tb.Fatal(err)
	}
	if err := spec.Variables.RecSize.Set(size); err != nil {
		tb.Fatal(err)
	}
	if ring != 0 {
		spec.Maps.Events.SetMaxEntries(ring)
	}
	if !hook {
		spec.Programs.OnEvent.SetAutoload(false)
	}
	t := &tool{emit: map[string]uint64{}}
	t.objs, err = spec.Load(&RingbenchLoadOptions{Records: func(name string, v int64) {
		t.mu.Lock()
		t.emit[name] = uint64(v)
		t.mu.Unlock()
	}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.objs.Close() })
	return t
}

// fill makes the kernel program write n records, each run of it writing
// at most per of them.
func (t *tool) fill(tb testing.TB, n, per uint64) {
	tb.Helper()
	for n > 0 {
		k := min(n, per)
		if err := t.objs.Variables.PerRun.Set(k); err != nil {
			tb.Fatal(err)
		}
		if _, err := t.objs.Fill.Raw().Run(&ebpf.RunOptions{}); err != nil {
			tb.Fatal(err)
		}
		n -= k
	}
}

func (t *tool) get(tb testing.TB, name string) uint64 {
	tb.Helper()
	v, err := map[string]func() (uint64, error){
		"written": t.objs.Variables.Written.Get,
		"lost":    t.objs.Variables.Lost.Get,
		"wsum":    t.objs.Variables.Wsum.Get,
	}[name]()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// drained is what a consumer measured: nanoseconds for the records it
// read, and their sum.
type drained struct {
	ns, n, sum uint64
}

// consumer drains n records of t's ring buffer.
type consumer struct {
	name  string
	hook  bool // the object has its record hook
	drain func(tb testing.TB, t *tool, n uint64) drained
}

var consumers = []consumer{
	{"serve-hook", true, func(tb testing.TB, t *tool, n uint64) drained {
		if err := t.objs.Variables.Want.Set(n); err != nil {
			tb.Fatal(err)
		}
		var t0 uint64
		err := t.objs.Serve(context.Background(), &RingbenchHandlers{OnStart: func() { t0, _ = testenv.Clocks() }})
		if err != nil {
			tb.Fatal(err)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return drained{t.emit["last_ns"] - t0, t.emit["seen"], t.emit["rsum"]}
	}},
	{"serve-callback", false, func(tb testing.TB, t *tool, n uint64) drained {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var t0 time.Time
		var d drained
		err := t.objs.Serve(ctx, &RingbenchHandlers{
			OnStart: func() { t0 = time.Now() },
			OnEvents: func(r *RingbenchRec) {
				d.sum += r.Val
				if d.n++; d.n == n {
					d.ns = uint64(time.Since(t0))
					cancel()
				}
			},
		})
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}},
	{"typed-Read", false, func(tb testing.TB, t *tool, n uint64) drained {
		return typed(tb, t, n, false)
	}},
	{"typed-ReadInto", false, func(tb testing.TB, t *tool, n uint64) drained {
		return typed(tb, t, n, true)
	}},
	{"cilium-Read", false, func(tb testing.TB, t *tool, n uint64) drained {
		return cilium(tb, t, n, false)
	}},
	{"cilium-ReadInto", false, func(tb testing.TB, t *tool, n uint64) drained {
		return cilium(tb, t, n, true)
	}},
	{"libbpf", false, func(tb testing.TB, t *tool, n uint64) drained {
		return libbpf(tb, t, n)
	}},
}

func typed(tb testing.TB, t *tool, n uint64, into bool) drained {
	rd, err := t.objs.Events.NewReader()
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var d drained
	var rec bridge.Record[RingbenchRec]
	t0 := time.Now()
	for ; d.n < n; d.n++ {
		if into {
			err = rd.ReadInto(&rec)
		} else {
			rec.Value, err = rd.Read()
		}
		if err != nil {
			tb.Fatal(err)
		}
		d.sum += rec.Value.Val
	}
	d.ns = uint64(time.Since(t0))
	return d
}

func cilium(tb testing.TB, t *tool, n uint64, into bool) drained {
	rd, err := ringbuf.NewReader(t.objs.Events.Raw())
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var d drained
	var rec ringbuf.Record
	t0 := time.Now()
	for ; d.n < n; d.n++ {
		if into {
			err = rd.ReadInto(&rec)
		} else {
			rec, err = rd.Read()
		}
		if err != nil {
			tb.Fatal(err)
		}
		d.sum += valOf(rec.RawSample)
	}
	d.ns = uint64(time.Since(t0))
	return d
}

// harness is libbpf's consumer, built once; missing says why there is
// none.
var harness struct {
	once          sync.Once
	path, missing string
}

func buildHarness(dir string) {
	cc, missing := testenv.CC()
	if missing != "" {
		harness.missing = missing
		return
	}
	out := filepath.Join(dir, "consume")
	if msg, err := exec.Command(cc, "-O2", "-o", out, filepath.Join("testdata", "consume.c"), "-lbpf").CombinedOutput(); err != nil {
		harness.missing = fmt.Sprintf("building testdata/consume.c against libbpf: %v: %s", err, msg)
		return
	}
	harness.path = out
}

func libbpf(tb testing.TB, t *tool, n uint64) drained {
	dir := testenv.BPFFS(tb)
	pin := filepath.Join(dir, "events")
	if err := t.objs.Events.Raw().Pin(pin); err != nil {
		tb.Fatal(err)
	}
	defer t.objs.Events.Raw().Unpin()
	out, err := exec.Command(harness.path, pin, strconv.FormatUint(n, 10)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tb.Fatalf("%s: %v: %s", harness.path, err, ee.Stderr)
		}
		tb.Fatal(err)
	}
	var d drained
	if _, err := fmt.Sscan(string(out), &d.ns, &d.n, &d.sum); err != nil {
		tb.Fatalf("%s printed %q: %v", harness.path, out, err)
	}
	return d
}

// BenchmarkDrain fills a ring buffer of 64 MiB to nine tenths with records
// of 16, 64 and 256 bytes, from a kernel program, then drains it with each
// consumer in turn, rotating their order, rounds times (SKELGEN_ROUNDS,
// default 5). Each consumer's line gives the median ns a record, its rate
// against cilium/ebpf's Read and ReadInto, and the records the producer
// lost (none: the buffer holds them all). Every drain must read every
// record with the right sum.
func BenchmarkDrain(b *testing.B) {
	testenv.Kernel(b)
	harness.once.Do(func() {
		dir, err := os.MkdirTemp("", "ringbench-")
		if err != nil {
			b.Fatal(err)
		}
		buildHarness(dir)
	})
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("SKELGEN_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	for _, size := range []uint32{16, 64, 256} {
		cost := uint64(size + 8)
		n := (64 << 20) * 9 / 10 / cost
		perRec := map[string][]float64{}
		lost := map[string]uint64{}
		for round := range rounds {
			for i := range consumers {
				c := consumers[(i+round)%len(consumers)]
				if c.name == "libbpf" && harness.path == "" {
					continue
				}
				t := load(b, size, 0, c.hook)
				t.fill(b, n, 1<<20)
				runtime.GC() // not during the drain: the loads made garbage
				written, wsum := t.get(b, "written"), t.get(b, "wsum")
				lost[c.name] += t.get(b, "lost")
				d := c.drain(b, t, written)
				if d.n != written || d.sum != wsum {
					b.Fatalf("%d bytes, %s: read %d records summing %d of the %d written summing %d", size, c.name, d.n, d.sum, written, wsum)
				}
				perRec[c.name] = append(perRec[c.name], float64(d.ns)/float64(d.n))
				t.objs.Close()
			}
		}
		read, into := median(perRec["cilium-Read"]), median(perRec["cilium-ReadInto"])
		for _, c := range consumers {
			b.Run(fmt.Sprintf("%dB/%s", size, c.name), func(b *testing.B) {
				if c.name == "libbpf" && harness.path == "" {
					testenv.SkipCC(b, harness.missing)
				}
				ns := median(perRec[c.name])
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(ns, "ns/record")
				b.ReportMetric(slices.Min(perRec[c.name]), "ns/record-fastest")
				b.ReportMetric(read/ns, "x-cilium-Read")
				b.ReportMetric(into/ns, "x-cilium-ReadInto")
				b.ReportMetric(float64(lost[c.name]), "lost")
			})
		}
	}
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSustained is the highest rate, in records a second, at which
// kernel programs writing 64-byte records from both CPUs lose none while
// Serve's record hook reads them from an 8 MiB ring buffer (about 116,000
// records, a sixth of a second at the rates this machine reaches, for
// the consumer's pauses when other work takes its CPU): one second at
// a rate, doubling the rate until records are lost or the producers can
// go no faster, then halving the gap to the highest rate without loss
// four times. Past that rate the producer's lost records are counted, and
// the end hook reports them to Go (the lost-past line).
func BenchmarkSustained(b *testing.B) {
	testenv.Kernel(b)
	best, over, lostOver := 0.0, 0.0, uint64(0)
	for rate := 250e3; ; rate *= 2 {
		got, lost := sustain(b, rate)
		if lost > 0 {
			over, lostOver = rate, lost
			break
		}
		best = got
		if got < rate*0.9 {
			break // the producers' limit
		}
	}
	if over > 0 {
		lo, hi := best, over
		for range 4 {
			mid := (lo + hi) / 2
			got, lost := sustain(b, mid)
			if lost == 0 {
				lo, best = mid, max(best, got)
			} else {
				hi, lostOver = mid, lost
			}
		}
		over = hi
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(best, "records/s-no-loss")
	b.ReportMetric(over, "records/s-lossy")
	b.ReportMetric(float64(lostOver), "lost-past")
}

// sustain runs Serve with the record hook while two producers, one bound
// to each CPU, write at rate records a second in all for a second, and
// returns the rate written and the records lost, as the end hook
// reported them; it fails unless the hook saw every record written.
func sustain(b *testing.B, rate float64) (float64, uint64) {
	b.Helper()
	t := load(b, 64, 8<<20, true)
	const per = 256 // records a run
	if err := t.objs.Variables.PerRun.Set(per); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- t.objs.Serve(ctx, &RingbenchHandlers{OnStart: func() { close(started) }})
	}()
	<-started
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	t0 := time.Now()
	for cpu := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := testenv.OnCPU(cpu, func(int) {
				every := time.Duration(float64(time.Second) * per / (rate / 2))
				next := time.Now()
				for time.Since(t0) < time.Second {
					if _, err := t.objs.Fill.Raw().Run(&ebpf.RunOptions{}); err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
						return
					}
					next = next.Add(every)
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
				}
			})
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if failed != nil {
		b.Fatal(failed)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	written, lost, seen := t.emit["written"], t.emit["lost"], t.emit["seen"]
	if seen != written || t.emit["rsum"] != t.emit["wsum"] {
		b.Fatalf("the hook read %d records of the %d written", seen, written)
	}
	b.Logf("%.0f records/s asked: %d written in %v, %d lost", rate, written, elapsed, lost)
	return float64(written) / elapsed.Seconds(), lost
}

func valOf(raw []byte) uint64 { return binary.NativeEndian.Uint64(raw[8:16]) }
