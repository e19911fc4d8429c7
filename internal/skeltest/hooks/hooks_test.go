package hooks

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// options are the .rodata options of a run.
type options struct {
	inProcess bool
	perTick   uint64
	stopAfter uint64
	stopCode  int32
	faultAt   uint64
	failBegin bool
	// until, when closed, cancels Serve's context.
	until <-chan struct{}
}

// served is what one Serve produced: its error, the output of
// skelgen_printf, the skelgen_emit values and the records the Go
// callbacks got, in order.
type served struct {
	err     error
	out     string
	emitted map[string]int64
	events  []HooksEvent
	samples int
	lost    uint64
	// afterEnd counts records delivered after the end hook's marker.
	afterEnd int
	// startOut and atStart are the output and the number of records when
	// OnStart was called (atStart -1: it was not).
	startOut string
	atStart  int
}

// serve loads the object with o and serves it until stop returns true for
// the records so far (then it cancels the context) or a hook stops it.
func serve(t *testing.T, o options, h *HooksHandlers, stop func(n int) bool) *served {
	t.Helper()
	spec, err := LoadHooksSpec()
	if err != nil {
		t.Fatal(err)
	}
	set := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	set(spec.Variables.PerTick.Set(o.perTick))
	set(spec.Variables.StopAfter.Set(o.stopAfter))
	set(spec.Variables.StopCode.Set(o.stopCode))
	if o.faultAt != 0 {
		set(spec.Variables.FaultAt.Set(o.faultAt))
	}
	if o.failBegin {
		set(spec.Variables.FailBegin.Set(1))
	}
	if !o.inProcess {
		set(spec.Variables.TargetTgid.Set(uint32(os.Getpid())))
	}
	var out bytes.Buffer
	r := &served{emitted: map[string]int64{}}
	var mu sync.Mutex // emits come from Serve's goroutine; the test reads after
	// The callbacks read a global the hooks use, through the typed API,
	// while the hook that calls them runs.
	var objs *HooksObjects
	useStats := func() {
		if _, err := objs.Variables.Stats.Get(); err != nil {
			t.Errorf("stats from a callback: %v", err)
		}
	}
	objs, err = spec.Load(&HooksLoadOptions{InProcess: o.inProcess, Output: usingWriter{&out, useStats}, Records: func(name string, v int64) {
		useStats()
		mu.Lock()
		r.emitted[name] = v
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if o.until != nil {
		go func() {
			<-o.until
			cancel()
		}()
	}
	if h == nil {
		h = &HooksHandlers{}
	}
	r.atStart = -1
	h.OnStart = func() {
		r.startOut, r.atStart = out.String(), len(r.events)
	}
	ended := false
	h.OnEvents = func(e *HooksEvent) {
		useStats()
		if ended {
			r.afterEnd++
		}
		if e.Kind == 99 {
			ended = true
		}
		r.events = append(r.events, *e)
		if stop != nil && stop(len(r.events)) {
			cancel()
		}
	}
	onSamples := h.OnSamples
	h.OnSamples = func(e *HooksEvent) {
		r.samples++
		if onSamples != nil {
			onSamples(e)
		}
	}
	h.OnLost = func(stream string, n uint64) {
		if stream != "samples" {
			t.Errorf("lost samples of %q", stream)
		}
		r.lost += n
	}
	testenv.NoHang(t, "Serve", time.Minute, func() { r.err = objs.Serve(ctx, h) })
	r.out = out.String()
	return r
}

// usingWriter is an Output writer that calls use on every Write.
type usingWriter struct {
	w   io.Writer
	use func()
}

func (w usingWriter) Write(p []byte) (int, error) {
	w.use()
	return w.w.Write(p)
}

// checkDelivery holds the promises about records: the record hook saw
// every record written before the end hook ran, each with its length; Go
// got exactly those it passed (in order, when ordered), with its writes,
// and then the end hook's marker, last: not the record the end hook wrote
// to the ring buffer in process ("late").
func checkDelivery(t *testing.T, r *served, ordered bool) {
	t.Helper()
	e := r.emitted
	if _, ok := e["produced"]; !ok {
		t.Fatalf("the end hook did not run (emitted %v)", e)
	}
	t.Logf("produced %d (ring buffer full %d times), seen %d, passed %d, Go got %d", e["produced"], e["full"], e["seen"], e["passed"], len(r.events))
	if e["seen"] != e["produced"] {
		t.Errorf("the record hook saw %d records of %d written before the end hook", e["seen"], e["produced"])
	}
	if e["bad_len"] != 0 {
		t.Errorf("%d records with a wrong length argument or unzeroed padding", e["bad_len"])
	}
	if want := (e["produced"] + 1) / 2; e["passed"] != want {
		t.Errorf("the record hook passed %d records, want the %d even ones", e["passed"], want)
	}
	if len(r.events) == 0 || r.events[len(r.events)-1].Kind != 99 {
		t.Fatalf("the end hook's marker is not the last record Go got")
	}
	if r.afterEnd != 0 {
		t.Errorf("%d records reached Go after the end hook's", r.afterEnd)
	}
	if late, ok := e["late"]; ok && late != 0 {
		t.Errorf("the end hook's ring buffer write returned %d", late)
	}
	got := r.events[:len(r.events)-1]
	if int64(len(got)) != e["passed"] {
		t.Errorf("Go got %d records, the hook passed %d", len(got), e["passed"])
	}
	if !ordered {
		// Two CPUs number their records before they reserve them: the
		// ring buffer keeps the order of the reservations.
		got = slices.Clone(got)
		slices.SortFunc(got, func(a, b HooksEvent) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	for i, ev := range got {
		if ev.Seq != uint64(2*i) || ev.Kind != 0 || ev.Payload[0] != 'h' {
			t.Fatalf("record %d: seq %d kind %d payload %q, want seq %d passed by the hook (payload 'h...')", i, ev.Seq, ev.Kind, ev.Payload[:], 2*i)
		}
		if sent := int(ev.Len); sent < 32 && ev.Payload[15] != 0 {
			t.Fatalf("record %d of %d bytes: byte 31 reads %q, want zero", i, sent, ev.Payload[15])
		}
	}
	if e["output"] != 0 {
		t.Errorf("skelgen_output in the end hook returned %d", e["output"])
	}
}

// TestServeInProcess: in process, the interval hook writes 50 records
// every 2ms; the record hook stops the tool with exit code 3 at the 500th.
// Begin runs first and end last; the actions behave as documented; every
// record written before end is seen, the odd ones dropped, the rest
// delivered in order with the hook's writes and their lengths.
func TestServeInProcess(t *testing.T) {
	r := serve(t, options{inProcess: true, perTick: 50, stopAfter: 500, stopCode: 3}, nil, nil)
	var exit *HooksExitError
	if !errors.As(r.err, &exit) || exit.Code != 3 || exit.Program != "on_event" {
		t.Fatalf("Serve: %v, want exit code 3 from on_event", r.err)
	}
	if !strings.HasPrefix(r.out, "begin\n") || !strings.HasSuffix(r.out, "end\n") || strings.Count(r.out, "\n") != 2 {
		t.Errorf("output %q: want begin, then end", r.out)
	}
	if r.startOut != "begin\n" || r.atStart != 0 {
		t.Errorf("OnStart ran with output %q and %d records, want after begin and before any record", r.startOut, r.atStart)
	}
	e := r.emitted
	for name, want := range map[string]int64{"detach": 0, "detach_again": -2, "attach": 0, "attach_nosuch": -2} {
		if got, ok := e[name]; !ok || got != want {
			t.Errorf("begin: %s returned %d (emitted: %v), want %d", name, got, ok, want)
		}
	}
	if e["ticks"] < 10 || e["produced"] < 500 {
		t.Errorf("%d ticks produced %d records; the tool stopped at the 500th", e["ticks"], e["produced"])
	}
	if e["hook_runs"] != e["ticks"]+e["seen"] {
		t.Errorf("hook runs %d, want ticks + records = %d", e["hook_runs"], e["ticks"]+e["seen"])
	}
	checkDelivery(t, r, true)
}

// TestStopDuringStorm: the interval hook writes 1000 records every 2ms and
// Go cancels the context at its 3000th record, while records keep coming:
// every record written before the stop still reaches the record hook and
// (when passed) Go, and nothing reaches Go after the end hook.
func TestStopDuringStorm(t *testing.T) {
	var atCancel int
	r := serve(t, options{inProcess: true, perTick: 1000}, nil, func(n int) bool {
		if n == 3000 {
			atCancel = n
			return true
		}
		return false
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("Go had %d records when it cancelled, %d at the end", atCancel, len(r.events)-1)
	checkDelivery(t, r, true)
}

// TestHookError: a record hook that faults stops the tool with its error,
// naming the hook; the end hook still runs; no record reaches Go after
// the fault.
func TestHookError(t *testing.T) {
	r := serve(t, options{inProcess: true, perTick: 20, faultAt: 8}, nil, nil)
	var merr *HooksMemoryError
	if r.err == nil || !errors.As(r.err, &merr) || !strings.Contains(r.err.Error(), "hook on_event (section ubpf/record/events)") {
		t.Fatalf("Serve: %v, want the memory error of hook on_event", r.err)
	}
	t.Log(r.err)
	if !strings.HasSuffix(r.out, "end\n") {
		t.Errorf("the end hook did not run: output %q", r.out)
	}
	for _, ev := range r.events {
		if ev.Kind != 99 && ev.Seq >= 8 {
			t.Errorf("record %d reached Go after the hook failed at 8", ev.Seq)
		}
	}
	if n := len(r.events); n != 5 || r.events[n-1].Kind != 99 {
		t.Errorf("Go got %d records, want 0, 2, 4, 6 and the end marker", n)
	}
}

// TestBeginError: a failing begin hook is Serve's error; no record is
// read and end does not run.
func TestBeginError(t *testing.T) {
	r := serve(t, options{inProcess: true, perTick: 20, failBegin: true}, nil, nil)
	if r.err == nil || !strings.Contains(r.err.Error(), "hook begin (section ubpf/begin)") {
		t.Fatalf("Serve: %v, want the error of hook begin", r.err)
	}
	if r.out != "" || len(r.events) != 0 || len(r.emitted) != 0 {
		t.Errorf("after a failed begin: output %q, %d records, emitted %v; want none", r.out, len(r.events), r.emitted)
	}
}

// TestSyntheticRecords: Go writes records into the in-process ring buffer
// (RingBuf.Write); they go through the record hook like the kernel's.
func TestSyntheticRecords(t *testing.T) {
	objs, err := LoadHooks(&HooksLoadOptions{InProcess: true, Output: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		e := HooksEvent{Seq: uint64(i), Kind: uint32(i % 2), Len: 32}
		if err := objs.Events.Write(unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e))); err != nil {
			t.Fatal(err)
		}
	}
	if err := objs.Events.Write(nil); err == nil {
		t.Error("an empty record was written")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []uint64
	err = objs.Serve(ctx, &HooksHandlers{OnEvents: func(e *HooksEvent) {
		if e.Kind == 99 {
			return
		}
		got = append(got, e.Seq)
		if len(got) == 5 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[0 2 4 6 8]" {
		t.Errorf("Go got %v, want the even records 0 to 8", got)
	}
}

// TestSignals: with Signals, SIGTERM stops the tool (and end runs)
// instead of killing the process.
func TestSignals(t *testing.T) {
	begun := make(chan struct{})
	objs, err := LoadHooks(&HooksLoadOptions{InProcess: true, Output: signalWriter(begun)})
	if err != nil {
		t.Fatal(err)
	}
	ended := false
	done := make(chan error)
	go func() {
		done <- objs.Serve(context.Background(), &HooksHandlers{Signals: true, OnEvents: func(e *HooksEvent) { ended = e.Kind == 99 }})
	}()
	<-begun
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not stop Serve")
	}
	if !ended {
		t.Error("the end hook did not run")
	}
}

// TestActionsOutsideServe: a program Go runs itself gets -EOPNOTSUPP from
// every action.
func TestActionsOutsideServe(t *testing.T) {
	objs, err := LoadHooks(&HooksLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	var o HooksOutside
	if _, err := objs.Outside.Run(&o); err != nil {
		t.Fatal(err)
	}
	if o.Stop != -95 || o.Attach != -95 || o.Detach != -95 || o.Output != -95 {
		t.Errorf("actions outside Serve returned %+v, want -95 (EOPNOTSUPP) each", o)
	}
}

// TestServeOnce: a second Serve of an object being served fails, and
// leaves the first running.
func TestServeOnce(t *testing.T) {
	begun := make(chan struct{})
	objs, err := LoadHooks(&HooksLoadOptions{InProcess: true, Output: signalWriter(begun)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	marker := false
	go func() {
		done <- objs.Serve(ctx, &HooksHandlers{OnEvents: func(e *HooksEvent) { marker = e.Kind == 99 }})
	}()
	<-begun // the begin hook printed: the first Serve runs
	if err := objs.Serve(ctx, nil); !errors.Is(err, bridge.ErrServing) {
		t.Errorf("second Serve: %v, want ErrServing", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !marker {
		t.Error("the first Serve's end hook did not reach its callback")
	}
}

// signalWriter closes c at its first write.
type signalWriter chan struct{}

func (w signalWriter) Write(p []byte) (int, error) {
	select {
	case <-w:
	default:
		close(w)
	}
	return len(p), nil
}

// hammer calls f from two goroutines until stop is closed.
func hammer(f func(), stop <-chan struct{}) *sync.WaitGroup {
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
					f()
				}
			}
		}()
	}
	return &wg
}

// TestStopDuringKernelStorm: the kernel writes a record on every getppid
// of this process, from two goroutines calling it without pause; Go
// cancels at its 5000th record. Serve detaches before draining, so every
// record the kernel wrote reaches the record hook, and Go gets exactly
// those it passed, then the end marker.
func TestStopDuringKernelStorm(t *testing.T) {
	testenv.Kernel(t)
	stop := make(chan struct{})
	wg := hammer(func() { syscall.Getppid() }, stop)
	defer wg.Wait()
	defer close(stop)
	r := serve(t, options{}, nil, func(n int) bool { return n == 5000 })
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.emitted["produced"] < 10000 {
		t.Errorf("the kernel wrote %d records", r.emitted["produced"])
	}
	checkDelivery(t, r, false)
}

// TestLostSamples: a slow callback makes the kernel lose perf samples;
// the lost hook and OnLost count the same losses, and no sample is both
// delivered and counted lost.
func TestLostSamples(t *testing.T) {
	testenv.Kernel(t)
	stop := make(chan struct{})
	wg := hammer(func() { syscall.Getpgid(0) }, stop)
	until := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(stop)
		wg.Wait()
		// The kernel writes its notice of lost samples with the next
		// sample that finds room: let the reader make room, then write.
		time.Sleep(300 * time.Millisecond)
		for range 10 {
			syscall.Getpgid(0)
		}
		time.Sleep(100 * time.Millisecond)
		close(until)
	}()
	r := serve(t, options{until: until}, &HooksHandlers{OnSamples: func(*HooksEvent) {
		time.Sleep(50 * time.Microsecond)
	}}, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	e := r.emitted
	t.Logf("samples written %d, delivered %d, lost %d in %d notices", e["samples"], r.samples, e["lost"], e["lost_notices"])
	if e["lost"] == 0 || uint64(e["lost"]) != r.lost {
		t.Errorf("the lost hook counted %d lost samples, OnLost %d; want the same, not 0", e["lost"], r.lost)
	}
	// The kernel writes its notice of lost samples when the buffer next
	// has room, so samples lost just before the stop are counted nowhere.
	if int64(r.samples)+e["lost"] > e["samples"] || r.samples == 0 {
		t.Errorf("%d delivered + %d lost, want at most the %d written, some delivered", r.samples, e["lost"], e["samples"])
	}
}
