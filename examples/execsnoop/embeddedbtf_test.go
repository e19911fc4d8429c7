//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestEmbeddedKernelBTF generates the tool with -btf-for a directory
// holding the running kernel's BTF, builds it (the generated files laid
// over the committed ones with go build -overlay) and runs it where
// /sys/kernel/btf is hidden, as on a kernel built without BTF: it loads
// from the minimal BTF it carries and traces an exec. The committed tool,
// which carries none, fails to load there.
func TestEmbeddedKernelBTF(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: generates, builds and runs the tool")
	}
	testenv.Kernel(t)
	testenv.Clang(t)
	vmlinux := testenv.KernelBTF(t)
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	kernels := t.TempDir()
	copyFile(t, vmlinux, filepath.Join(kernels, strings.TrimSpace(string(release))+".btf"))

	gen := t.TempDir()
	skelgen := exec.Command("go", "run", "github.com/skelgen/skelgen/cmd/skelgen", "-o", gen, "-pkg", "main", "-runtime", "import",
		"-cflags", "-O2 -mcpu=v3 -I../include", "-btf-for", kernels, "execsnoop.bpf.c")
	if out, err := skelgen.CombinedOutput(); err != nil {
		t.Fatalf("skelgen -btf-for: %v\n%s", err, out)
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]string{}
	made, _ := filepath.Glob(filepath.Join(gen, "*"))
	for _, f := range made {
		overlay[filepath.Join(here, filepath.Base(f))] = f
	}
	if _, ok := overlay[filepath.Join(here, "execsnoop_bpfel_btf.tar.gz")]; !ok {
		t.Fatalf("skelgen -btf-for wrote no execsnoop_bpfel_btf.tar.gz, only %q", made)
	}
	overlayJSON, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlayJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	embedded := filepath.Join(t.TempDir(), "execsnoop-btf")
	if out, err := exec.Command("go", "build", "-overlay", overlayFile, "-o", embedded, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -overlay: %v\n%s", err, out)
	}
	plain := filepath.Join(t.TempDir(), "execsnoop")
	if out, err := exec.Command("go", "build", "-o", plain, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("committed", func(t *testing.T) {
		cmd := exec.Command(plain, "-duration", "1s")
		testenv.HideKernelBTF(cmd)
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 99 {
			t.Fatalf("could not hide the kernel's BTF:\n%s", out)
		}
		if err == nil {
			// cilium/ebpf found the kernel's BTF elsewhere (/boot).
			t.Skipf("the tool without embedded BTF loads with /sys/kernel/btf hidden:\n%s", out)
		}
		if !strings.Contains(string(out), "has no BTF (/sys/kernel/btf/vmlinux), which the programs' CO-RE relocations need: generate the skeleton with skelgen -btf-for") {
			t.Errorf("the tool without embedded BTF: %v, want a failure to find kernel BTF naming -btf-for:\n%s", err, out)
		}
	})

	t.Run("embedded", func(t *testing.T) {
		cmd := exec.Command(embedded, "-duration", "60s")
		testenv.HideKernelBTF(cmd)
		out := &tooltest.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		defer func() {
			cmd.Process.Kill()
			<-done
		}()
		deadline := time.After(60 * time.Second)
		for len(out.Lines("PCOMM")) == 0 {
			select {
			case err := <-done:
				done <- err
				t.Fatalf("the tool with embedded BTF stopped before tracing: %v\n%s", err, out.String())
			case <-deadline:
				t.Fatalf("the tool with embedded BTF did not start tracing in 60s:\n%s", out.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		echo, err := exec.LookPath("echo")
		if err != nil {
			t.Skip("no echo:", err)
		}
		if err := exec.Command(echo, "skelgen-embedded-btf").Run(); err != nil {
			t.Fatal(err)
		}
		line := tooltest.WaitFor(t, out, echo+" skelgen-embedded-btf")
		t.Logf("traced with /sys/kernel/btf hidden: %s", line)
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
