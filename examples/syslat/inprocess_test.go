package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
)

// record is e as the bytes the kernel program sends.
func record(e SyslatEvent) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e))
}

// load loads the tool in process with the options of run.
func load(t *testing.T, out *tooltest.Buffer, slowNs, intervalNs, maxRecords uint64) *SyslatObjects {
	t.Helper()
	spec, err := LoadSyslatSpec()
	if err != nil {
		t.Fatal(err)
	}
	v := spec.Variables
	if err := v.SlowNs.Set(slowNs); err != nil {
		t.Fatal(err)
	}
	if err := v.IntervalNs.Set(intervalNs); err != nil {
		t.Fatal(err)
	}
	if err := v.MaxRecords.Set(maxRecords); err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(&SyslatLoadOptions{InProcess: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// write feeds n records of syscall id taking lat ns each.
func write(t *testing.T, objs *SyslatObjects, n int, id uint32, lat uint64) {
	t.Helper()
	for range n {
		if err := objs.Events.Write(record(SyslatEvent{Id: id, LatNs: lat, Pid: 42})); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReportInProcess: the hooks alone, on synthetic records: 100 fast
// calls of syscall 39 (2us), 5 slow ones of 35 (50ms) and one of 1 (12ms,
// under the 20ms threshold). The record hook passes only the 5 to Go;
// at the 50th record it detaches the probe (in process, the bookkeeping:
// 0); the end report counts everything.
func TestReportInProcess(t *testing.T) {
	var out tooltest.Buffer
	objs := load(t, &out, 20e6, 3600e9, 50)
	write(t, objs, 100, 39, 2000)
	write(t, objs, 5, 35, 50e6)
	write(t, objs, 1, 1, 12e6)
	ctx, cancel := context.WithCancel(context.Background())
	var slow []SyslatEvent
	err := objs.Serve(ctx, &SyslatHandlers{OnEvents: func(e *SyslatEvent) {
		slow = append(slow, *e)
		if len(slow) == 5 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if len(slow) != 5 {
		t.Errorf("Go got %d slow calls, want 5", len(slow))
	}
	for _, e := range slow {
		if e.Id != 35 || e.LatNs != 50e6 {
			t.Errorf("Go got %+v, want only the 50ms calls of 35", e)
		}
	}
	if !strings.Contains(text, "detached sys_exit after 50 records (0)\n") || !strings.Contains(text, "106 system calls traced (sys_exit detached after 50):\n") {
		t.Error("no detach at the 50th record, or no summary of 106")
	}
	for id, want := range map[int][]uint64{39: {100, 200, 2, 2, 0}, 35: {5, 250000, 50000, 50000, 5}, 1: {1, 12000, 12000, 12000, 0}} {
		if r := row(text, "", id); !slices.Equal(r, want) {
			t.Errorf("syscall %d: %v, want %v", id, r, want)
		}
	}
	// The 100 fast calls fall in 2 -> 3 us.
	if m := regexp.MustCompile(`(?m)^syscall 39:\n.*\n(?:.*\n)*?\s+2 -> 3\s+: (\d+)`).FindStringSubmatch(text); m == nil || m[1] != "100" {
		t.Errorf("histogram of 39: %q, want 100 in 2 -> 3", m)
	}
}

// TestIntervalInProcess: with a 50ms interval, three batches of 40 slow
// calls of 39 (30ms) and one fast call of 0 (3us), each batch awaited
// until Go got its slow calls and a table was printed after: the top 10
// tables together count every call once, and the end report counts them
// too.
func TestIntervalInProcess(t *testing.T) {
	var out tooltest.Buffer
	objs := load(t, &out, 20e6, 50e6, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	started := make(chan struct{})
	var slow atomic.Int64
	go func() {
		done <- objs.Serve(ctx, &SyslatHandlers{OnStart: func() { close(started) }, OnEvents: func(*SyslatEvent) { slow.Add(1) }})
	}()
	<-started
	const header = "in the last interval"
	for batch := range 3 {
		write(t, objs, 1, 0, 3000)
		write(t, objs, 40, 39, 30e6)
		for slow.Load() < int64(40*(batch+1)) {
			time.Sleep(time.Millisecond)
		}
		// The hooks run in order: the next table counts the batch.
		tables := strings.Count(out.String(), header)
		for strings.Count(out.String(), header) == tables {
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	var sum39, sum0 uint64
	parts := strings.Split(text, header)
	for _, part := range parts[1:] {
		part, _, _ = strings.Cut(part, "system calls traced")
		if r := row(part, "", 39); r != nil {
			sum39 += r[0]
		}
		if r := row(part, "", 0); r != nil {
			sum0 += r[0]
		}
	}
	if sum39 != 120 || sum0 != 3 {
		t.Errorf("the interval tables count %d calls of 39 and %d of 0, want 120 and 3", sum39, sum0)
	}
	end := text[strings.Index(text, "system calls traced"):]
	if r := row(end, "", 39); !slices.Equal(r, []uint64{120, 3600000, 30000, 30000, 120}) {
		t.Errorf("end report of 39: %v", r)
	}
	if !strings.HasPrefix(text, "Tracing system call latency") || !strings.Contains(text, "123 system calls traced:") {
		t.Error("no banner, or no summary of 123 calls")
	}
}
