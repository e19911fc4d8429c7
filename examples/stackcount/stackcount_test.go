package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestStackcount sizes the maps from the flags, calls getppid a known
// number of times from a locked thread, and requires the printed stacks
// of this process to add up to that number, go through the system call
// entry, and come with the process name; the header reports the sizes of
// the maps as loaded.
func TestStackcount(t *testing.T) {
	testenv.Kernel(t)
	const calls = 7
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{tracepoint: "syscalls:sys_enter_getppid", pid: os.Getpid(), perProcess: true, depth: 12, maxStacks: 64}, ready)
	})
	runtime.LockOSThread()
	for range calls {
		syscall.Getppid()
	}
	runtime.UnlockOSThread()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if !strings.Contains(text, "12 frames deep, up to 64 stacks (stack map: value size 96, max_entries 64)") {
		t.Error("the header does not show maps sized from the flags")
	}
	// Stacks are separated by blank lines; each ends with the process and
	// its count.
	total := 0
	for _, block := range strings.Split(text, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) < 3 || !strings.Contains(lines[len(lines)-2], fmt.Sprintf("[%d]", os.Getpid())) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(lines[len(lines)-1]))
		if err != nil {
			t.Fatalf("count line %q", lines[len(lines)-1])
		}
		if !strings.Contains(block, "do_syscall_64") {
			t.Errorf("a getppid stack without do_syscall_64:\n%s", block)
		}
		if len(lines)-2 > 12 {
			t.Errorf("a stack deeper than -stack-depth 12:\n%s", block)
		}
		total += n
	}
	if total != calls {
		t.Errorf("stacks of this process add up to %d, want %d", total, calls)
	}
}

func TestStackcountBadFlags(t *testing.T) {
	for _, o := range []options{
		{tracepoint: "nocolon", depth: 8, maxStacks: 8},
		{tracepoint: "a:b", depth: 200, maxStacks: 8},
	} {
		if err := run(context.Background(), os.Stdout, o, nil); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
