package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestPslist starts a process and finds it in the listing, with its
// parent (this test), its user and its command.
func TestPslist(t *testing.T) {
	testenv.Kernel(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var out bytes.Buffer
	if err := run(&out, options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := fmt.Sprintf("%7d %7d %7d %6d %7d %s", cmd.Process.Pid, cmd.Process.Pid, os.Getpid(), os.Getuid(), 1, "sleep")
	found := false
	for _, l := range lines {
		found = found || l == want
	}
	if !found {
		t.Errorf("%d processes, none is %q", len(lines)-1, want)
	}
	t.Logf("%s\n...\n%s\n... (%d processes)", lines[0], want, len(lines)-1)
}

// TestPslistThreads lists the threads of this process alone: a Go test
// runs several, each with its own tid and the process's pid.
func TestPslistThreads(t *testing.T) {
	testenv.Kernel(t)
	// The Go runtime may start a thread while the iterator walks them, and
	// threads listed before it then count one fewer: list again, a few
	// times, until the counts agree.
	var procs []PslistProc
	for range 5 {
		var err error
		if procs, err = list(options{pid: os.Getpid(), threads: true}); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(procs, func(p PslistProc) bool { return int(p.Threads) != len(procs) }) {
			break
		}
	}
	if len(procs) < 2 {
		t.Fatalf("%d threads of pid %d, a Go test has several", len(procs), os.Getpid())
	}
	tids := map[uint32]bool{}
	for _, p := range procs {
		if int(p.Pid) != os.Getpid() || int(p.Threads) != len(procs) {
			t.Errorf("thread %+v: pid or thread count is not this process's (%d, %d threads)", p, os.Getpid(), len(procs))
		}
		tids[p.Tid] = true
	}
	if len(tids) != len(procs) || !tids[uint32(os.Getpid())] {
		t.Errorf("tids %v: not distinct, or without the main thread %d", tids, os.Getpid())
	}
}
