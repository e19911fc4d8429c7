package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// row returns the figures of syscall id in the first table row for it
// after the text from (COUNT, TOTAL_us, AVG_us, MAX_us, SLOW), or nil.
func row(text, from string, id int) []uint64 {
	i := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(from)).FindStringIndex(text)
	if i == nil {
		return nil
	}
	m := regexp.MustCompile(fmt.Sprintf(`(?m)^\s+%d\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`, id)).FindStringSubmatch(text[i[1]:])
	if m == nil {
		return nil
	}
	var v []uint64
	for _, s := range m[1:] {
		n, _ := strconv.ParseUint(s, 10, 64)
		v = append(v, n)
	}
	return v
}

// slowLines returns the latencies, in microseconds, of the slow calls of
// syscall id that Go printed.
func slowLines(text string, id int) []uint64 {
	var lat []uint64
	for _, m := range regexp.MustCompile(fmt.Sprintf(`(?m)^slow: .* syscall\s+%d\s+(\d+) us`, id)).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		lat = append(lat, n)
	}
	return lat
}

// TestSyslat traces this process making 5000 getppid calls and three
// 30ms clock_nanosleeps, with 20ms as slow: the end report counts exactly 5000
// getppid calls, Go printed exactly the three sleeps as slow (each at
// least 30ms; fast calls, getppid among them, were dropped by the record
// hook), and the sleeps' row shows them.
func TestSyslat(t *testing.T) {
	testenv.Kernel(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{pid: syscall.Getpid(), slow: 20 * time.Millisecond, interval: time.Hour}, ready)
	})
	for range 5000 {
		syscall.Getppid()
	}
	for range 3 {
		// clock_nanosleep, which the Go runtime does not call itself.
		ts := syscall.NsecToTimespec(int64(30 * time.Millisecond))
		const clockMonotonic = 1
		if _, _, errno := syscall.Syscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0); errno != 0 {
			t.Fatal(errno)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if r := row(text, "", syscall.SYS_GETPPID); r == nil || r[0] != 5000 || r[4] != 0 {
		t.Errorf("getppid row %v: want 5000 calls, none slow", r)
	}
	if r := row(text, "", syscall.SYS_CLOCK_NANOSLEEP); r == nil || r[0] < 3 || r[3] < 30000 || r[4] != 3 {
		t.Errorf("clock_nanosleep row %v: want at least 3 calls, a maximum of at least 30000us, 3 slow", r)
	}
	lat := slowLines(text, syscall.SYS_CLOCK_NANOSLEEP)
	if len(lat) != 3 {
		t.Fatalf("slow clock_nanosleep lines: %v, want 3", lat)
	}
	for _, l := range lat {
		if l < 30000 {
			t.Errorf("a 30ms sleep printed as %dus", l)
		}
	}
	if n := len(slowLines(text, syscall.SYS_GETPPID)); n != 0 {
		t.Errorf("%d fast getppid calls reached Go", n)
	}
	tooltest.WaitFor(t, out, "usecs", "distribution")
}

// TestSyslatDetach: with -max-records 500, the record hook detaches the
// per-call probe at the 500th record (the action returns 0). Of 1000
// getppid calls before the detach shows, some are counted; of 5000 after
// it, none are, and the report says so.
func TestSyslatDetach(t *testing.T) {
	testenv.Kernel(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{pid: syscall.Getpid(), slow: time.Hour, interval: time.Hour, maxRecords: 500}, ready)
	})
	for range 1000 {
		syscall.Getppid()
	}
	// The hook detaches while the tool serves; records already in the
	// ring buffer are still read.
	tooltest.WaitFor(t, out, "detached sys_exit after 500 records (0)")
	for range 5000 {
		syscall.Getppid()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	m := regexp.MustCompile(`(?m)^(\d+) system calls traced \(sys_exit detached after 500\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no summary naming the detach")
	}
	total, _ := strconv.Atoi(m[1])
	r := row(text, "", syscall.SYS_GETPPID)
	if r == nil || r[0] == 0 || r[0] > 1000 || int(r[0]) > total {
		t.Errorf("getppid row %v of %d records: want some of the 1000 calls before the detach, none of the 5000 after", r, total)
	}
}
