package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestExecsnoop runs the tool, executes a command with an argument that
// holds a space and a file that does not exist, and requires both execs
// in the output with their parent, return value and arguments.
func TestExecsnoop(t *testing.T) {
	testenv.Kernel(t)
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo:", err)
	}
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{uid: -1, maxArgs: 20}, ready)
	})
	if err := exec.Command(echo, "skelgen-exec", "two words").Run(); err != nil {
		t.Fatal(err)
	}
	missing := "/nonexistent/skelgen-exec-missing"
	if err := exec.Command(missing, "arg").Run(); err == nil {
		t.Fatal("executing a missing file succeeded")
	}
	ok := tooltest.WaitFor(t, out, echo+` skelgen-exec "two words"`)
	failed := tooltest.WaitFor(t, out, missing+" arg")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("output:\n%s", strings.Join(out.Lines("PCOMM"), "\n"))
	t.Logf("%s\n%s", ok, failed)
	fields := strings.Fields(ok)
	if fields[0] != "echo" || fields[2] != fmt.Sprint(os.Getpid()) || fields[3] != "0" {
		t.Errorf("echo's exec: %q, want comm echo, parent %d, return 0", ok, os.Getpid())
	}
	if fields := strings.Fields(failed); fields[2] != fmt.Sprint(os.Getpid()) || fields[3] != "-2" {
		t.Errorf("the failed exec: %q, want parent %d and -2 (ENOENT)", failed, os.Getpid())
	}
}

// With -no-failed the kernel drops failed execs; with -max-args 1 only the
// file name is kept.
func TestExecsnoopOptions(t *testing.T) {
	testenv.Kernel(t)
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo:", err)
	}
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{uid: os.Getuid(), noFailed: true, maxArgs: 1}, ready)
	})
	missing := "/nonexistent/skelgen-exec-missing"
	exec.Command(missing, "arg").Run()
	if err := exec.Command(echo, "skelgen-exec-opts").Run(); err != nil {
		t.Fatal(err)
	}
	line := tooltest.WaitFor(t, out, "echo", fmt.Sprint(os.Getpid()))
	stop()
	if strings.Contains(line, "skelgen-exec-opts") {
		t.Errorf("-max-args 1 kept an argument: %q", line)
	}
	if l := out.Lines(missing); len(l) > 0 {
		t.Errorf("-no-failed printed a failed exec: %q", l)
	}
}
