package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestFreshBoot runs the demo as on a machine just booted, where nothing
// has mounted tracefs: the skeleton mounts it, attaches its tracepoints
// and traces real system calls.
func TestFreshBoot(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds and runs the demo")
	}
	testenv.Kernel(t)
	bin := filepath.Join(t.TempDir(), "latency")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-duration", "2s")
	testenv.FreshBoot(cmd)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the demo on a fresh boot: %v", err)
	}
	for _, want := range []string{`(?m)^mode: kernel`, `distribution`, `(?m)^[1-9][0-9]* syscalls: p50`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the demo's output lacks %s", want)
		}
	}
}
