package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// A pid above the kernel's pid_max limit (4194304): kill fails with ESRCH.
const noSuchPid = 1 << 30

// TestKillsnoop sends signal 0 to this process and to a process that
// cannot exist, and requires both in the output with the sender, signal,
// target and result.
func TestKillsnoop(t *testing.T) {
	testenv.Kernel(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{pid: os.Getpid(), signal: -1}, ready)
	})
	if err := syscall.Kill(os.Getpid(), 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(noSuchPid, 0); err != syscall.ESRCH {
		t.Fatalf("kill of pid %d: %v, want ESRCH", noSuchPid, err)
	}
	me := fmt.Sprint(os.Getpid())
	ok := tooltest.WaitFor(t, out, " "+me+" ", fmt.Sprintf(" 0    %-7s 0", me))
	failed := tooltest.WaitFor(t, out, fmt.Sprintf(" 0    %-7d -3 (no such process)", noSuchPid))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s\n%s", out.Lines("COMM")[0], ok, failed)
	if f := strings.Fields(failed); f[1] != me || f[2] != "killsnoop.test" {
		t.Errorf("the failed kill's sender: %q, want %s killsnoop.test", failed, me)
	}
}

// With -x and -s, only failed kills of that signal are printed.
func TestKillsnoopFilters(t *testing.T) {
	testenv.Kernel(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{pid: os.Getpid(), signal: int(syscall.SIGUSR2), failedOnly: true}, ready)
	})
	syscall.Kill(os.Getpid(), 0)             // not SIGUSR2
	syscall.Kill(noSuchPid, 0)               // not SIGUSR2
	syscall.Kill(noSuchPid, syscall.SIGUSR2) // printed
	line := tooltest.WaitFor(t, out, fmt.Sprintf(" %-4d %-7d -3", int(syscall.SIGUSR2), noSuchPid))
	stop()
	if n := len(out.Lines(" killsnoop.test ")); n != 1 {
		t.Errorf("%d lines printed, want only %q:\n%s", n, line, out.String())
	}
}
