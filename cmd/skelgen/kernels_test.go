package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// bareKernel writes a kernel BTF holding one int type and nothing a
// program could relocate against.
func bareKernel(t *testing.T, dir string) {
	t.Helper()
	b, err := btf.NewBuilder([]btf.Type{&btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "0.0.0-bare.btf"), raw)
}

// TestCheckKernelsCommand runs skelgen check -kernels on a committed
// object: against the running kernel every program resolves (runqlat's
// fallback read is guarded), against a kernel without its types it fails
// with status 1 and names the missing struct.
func TestCheckKernelsCommand(t *testing.T) {
	obj := filepath.Join(testenv.ModuleRoot(t), "testdata", "corpus", "runqlat.bpf.o")
	good := t.TempDir()
	data, err := os.ReadFile(testenv.KernelBTF(t))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(good, "running.btf"), data)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "-kernels", good, obj}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "handle_sched_switch") || !strings.Contains(stdout.String(), "guarded") {
		t.Errorf("matrix without the guarded program:\n%s", stdout.String())
	}
	bad := t.TempDir()
	bareKernel(t, bad)
	stdout.Reset()
	if code := run([]string{"check", "-kernels", bad, obj}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"FAILS", "the kernel has no struct task_struct", "runqlat.bpf.c:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in\n%s", want, stdout.String())
		}
	}
}

// TestGenerateKernels: -kernels fails a generation whose programs do not
// load on a kernel of the directory, with the matrix in the error.
func TestGenerateKernels(t *testing.T) {
	obj := filepath.Join(testenv.ModuleRoot(t), "testdata", "corpus", "runqlat.bpf.o")
	dir := t.TempDir()
	bad := t.TempDir()
	bareKernel(t, bad)
	var stdout, stderr bytes.Buffer
	t.Setenv("SKELGEN_CACHE", "off")
	code := run([]string{"-kernels", bad, "-o", dir, "-pkg", "runqlat", "-runtime", "import", obj}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "programs fail on some kernel") {
		t.Fatalf("exit %d, want 1 with the matrix\n%s%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "runqlat_bpfel.go")); err == nil {
		t.Error("the skeleton was written although the kernel check failed")
	}
}

// TestCheckBTFFor: a go:generate line with -btf-for and a directory
// relative to its package checks clean after generation, and stale (the
// archive of kernel BTF) once a kernel joins the directory.
func TestCheckBTFFor(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: loads packages")
	}
	root := testenv.ModuleRoot(t)
	debian, _ := filepath.Glob(filepath.Join(testenv.DebianKernels(t), "*-cloud-amd64.btf"))
	mod := emptyModule(t, "example.com/btffor")
	obj, err := os.ReadFile(filepath.Join(root, "examples", "execsnoop", "execsnoop_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(mod, "a")
	write(t, filepath.Join(pkg, "tool.bpf.o"), obj)
	kernels := filepath.Join(pkg, "kernels")
	for _, k := range debian {
		if err := os.MkdirAll(kernels, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(k, filepath.Join(kernels, filepath.Base(k))); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(pkg, "gen.go"), []byte("package a\n\n//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -btf-for kernels tool.bpf.o\n"))
	if code, _, stderr := runCLI(t, "", "-pkg", "a", "-runtime", "import", "-btf-for", kernels, filepath.Join(pkg, "tool.bpf.o")); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	t.Chdir(mod)
	t.Setenv("GOFLAGS", "-mod=mod")
	if code, out, stderr := runCLI(t, "", "check", "./..."); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	bareKernel(t, kernels)
	code, out, stderr := runCLI(t, "", "check", "./...")
	if want := "a/tool_bpfel_btf.tar.gz: stale"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("check after a kernel was added: exit %d, want 1 and %q\n%s%s", code, want, out, stderr)
	}
	if !strings.Contains(out, "a/tool_bpfel.go: stale") {
		t.Errorf("check after a kernel was added: the skeleton's list of kernels is not stale\n%s", out)
	}
}
