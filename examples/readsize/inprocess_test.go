package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
)

// TestLoadInProcess: the skeleton loads without privileges, every map in
// process.
func TestLoadInProcess(t *testing.T) {
	objs, err := LoadReadsize(&ReadsizeLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Collection() != nil {
		t.Error("an object loaded in process has a kernel collection")
	}
}

// TestReportInProcess: the hooks alone, without privileges. Go fills the
// maps as the kernel program would for three reads of 700 bytes and one
// of 5000, and stops the tool at once: the end hook's report shows them.
func TestReportInProcess(t *testing.T) {
	var out tooltest.Buffer
	objs, err := LoadReadsize(&ReadsizeLoadOptions{InProcess: true, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	for slot, n := range map[uint32]uint64{9: 3, 12: 1} { // 512 -> 1023, 4096 -> 8191
		if err := objs.Hist.Put(slot, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := objs.Totals.Put(0, ReadsizeTotals{Reads: 4, Bytes: 3*700 + 5000}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := objs.Serve(ctx, &ReadsizeHandlers{OnStart: cancel}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if !strings.HasPrefix(text, "Tracing read() sizes... Hit Ctrl-C to end.\n") {
		t.Error("no banner from the begin hook")
	}
	for slot, want := range map[string]string{"512 -> 1023": "3", "4096 -> 8191": "1", "1024 -> 2047": "0"} {
		m := regexp.MustCompile(`(?m)^\s*` + slot + `\s*: (\d+)\s`).FindStringSubmatch(text)
		if m == nil || m[1] != want {
			t.Errorf("slot %s: %q, want %s", slot, m, want)
		}
	}
	if !strings.Contains(text, "4 reads, 7100 bytes, mean 1775 bytes") {
		t.Error("no summary of the four reads")
	}
}

// TestIntervalInProcess: with a 100ms interval the tick hook reports the
// counts Go put in the maps once, then resets them: the next report says
// there were no reads.
func TestIntervalInProcess(t *testing.T) {
	var out tooltest.Buffer
	spec, err := LoadReadsizeSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.IntervalNs.Set(uint64(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(&ReadsizeLoadOptions{InProcess: true, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.Hist.Put(9, 2); err != nil {
		t.Fatal(err)
	}
	if err := objs.Totals.Put(0, ReadsizeTotals{Reads: 2, Bytes: 1400}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- objs.Serve(ctx, nil) }()
	tooltest.WaitFor(t, &out, "no reads in this interval")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if strings.Count(text, "2 reads, 1400 bytes, mean 700 bytes") != 1 {
		t.Error("the two reads were not reported exactly once")
	}
	if i, j := strings.Index(text, "2 reads"), strings.Index(text, "no reads in this interval"); i < 0 || j < i {
		t.Error("the empty interval was not reported after the two reads")
	}
}
