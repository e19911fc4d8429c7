//go:build amd64 || arm64

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// ticker builds testdata/ticker.c, whose probe skelgen:tick is written with
// systemtap's sys/sdt.h (Debian's systemtap-sdt-dev).
func ticker(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err == nil {
		bin := filepath.Join(t.TempDir(), "ticker")
		var out []byte
		if out, err = exec.Command(cc, "-O2", "-o", bin, filepath.Join("testdata", "ticker.c")).CombinedOutput(); err == nil {
			return bin
		}
		err = fmt.Errorf("%v\n%s", err, out)
	}
	if os.Getenv("SKELGEN_REQUIRE_CLANG") == "1" {
		t.Fatalf("building the probed program (needs cc and sys/sdt.h from systemtap-sdt-dev): %v", err)
	}
	t.Skipf("building the probed program (needs cc and sys/sdt.h from systemtap-sdt-dev): %v", err)
	return ""
}

// TestUsdtsnoop attaches to skelgen:tick in a program built with sys/sdt.h,
// runs it, and requires each of its five hits with the arguments it
// passed: i (a register), -i (a 32-bit signed value) and i*1000.
func TestUsdtsnoop(t *testing.T) {
	testenv.Kernel(t)
	bin := ticker(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{bin: bin, provider: "skelgen", name: "tick"}, ready)
	})
	cmd := exec.Command(bin, "5")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	for i := 1; i <= 5; i++ {
		tooltest.WaitFor(t, out, pid+" ", fmt.Sprintf("%-16s %d %d %d", "ticker", i, -i, i*1000))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(out.Lines(" ticker ")); n != 5 {
		t.Errorf("%d hits printed, want 5:\n%s", n, out.String())
	}
	t.Logf("\n%s", out.String())
}

// TestUsdtsnoopPid: with -pid, hits of other processes running the binary
// are not printed.
func TestUsdtsnoopPid(t *testing.T) {
	testenv.Kernel(t)
	bin := ticker(t)
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{bin: bin, provider: "skelgen", name: "tick", pid: os.Getpid()}, ready)
	})
	if err := exec.Command(bin, "3").Run(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(out.Lines(" ticker ")); n != 0 {
		t.Errorf("%d hits of another process printed:\n%s", n, out.String())
	}
}
