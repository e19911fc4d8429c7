package gen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestVendoredPackageStandalone generates the latency example with
// -runtime vendor into a scratch module that does not require skelgen,
// builds it, runs it in process, and checks that skelgen check notices an
// edited copy of the runtime.
func TestVendoredPackageStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a module")
	}
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	pkg := filepath.Join(mod, "latency")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile := func(src, dst string) {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(root, "examples/latency/main.go"), filepath.Join(pkg, "main.go"))
	// The prebuilt object as input: no compiler needed.
	copyFile(filepath.Join(root, "examples/latency/latency_bpfel.o"), filepath.Join(pkg, "latency.bpf.o"))
	copyFile(filepath.Join(root, "go.sum"), filepath.Join(mod, "go.sum"))
	goMod := "module example.com/app\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	// main.go's go:generate line names latency.bpf.c; this copy generates
	// from the object.
	mainGo, _ := os.ReadFile(filepath.Join(pkg, "main.go"))
	mainGo = bytes.Replace(mainGo, []byte("cmd/skelgen latency.bpf.c"), []byte("cmd/skelgen latency.bpf.o"), 1)
	os.WriteFile(filepath.Join(pkg, "main.go"), mainGo, 0o644)

	files, err := Generate(context.Background(), Config{Input: filepath.Join(pkg, "latency.bpf.o"), Package: "main", AOT: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	vendored := 0
	for _, f := range files {
		if IsVendored(f.Path) {
			vendored++
		}
	}
	if vendored == 0 {
		t.Fatal("no runtime copy written")
	}

	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	modData, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	if strings.Contains(string(modData), "skelgen") {
		t.Fatalf("the scratch module needs skelgen:\n%s", modData)
	}
	goCmd("vet", "./...")
	out := goCmd("run", "./latency", "-simulate", "-duration", "1500ms", "-interval", "500ms")
	for _, want := range []string{"mode: in process", "distribution", "syscalls: p50", "metrics from host_metric: p50_ns="} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// skelgen check: current, then an edited runtime copy is stale.
	var report bytes.Buffer
	res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stale) != 0 {
		t.Fatalf("fresh copy reported stale:\n%s", report.String())
	}
	interp := filepath.Join(mod, "internal/skelgenrt/runtime/interp.go")
	data, err := os.ReadFile(interp)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(interp, append(data, "\n// local change\n"...), 0o644)
	report.Reset()
	res, err = Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stale) != 1 || !strings.HasSuffix(res.Stale[0], "skelgenrt/runtime/interp.go") {
		t.Errorf("stale = %v, want the edited runtime copy\n%s", res.Stale, report.String())
	}
}

// TestMistypedHostFailsToCompile: a host that implements a host function
// with the wrong Go type is a compile error, not a run-time surprise.
func TestMistypedHostFailsToCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a module")
	}
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	pkg := filepath.Join(mod, "probes")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	obj, err := os.ReadFile(filepath.Join(root, "internal/skeltest/ubpf/ubpf_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(pkg, "ubpf.bpf.o"), string(obj))
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	write(filepath.Join(mod, "go.sum"), string(sum))
	write(filepath.Join(mod, "go.mod"), "module example.com/app\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n")
	files, err := Generate(context.Background(), Config{Input: filepath.Join(pkg, "ubpf.bpf.o"), Package: "probes", AOT: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	const host = `package main

import "example.com/app/probes"

type host struct{}

func (host) HostNow() uint64                  { return 0 }
func (host) HostEmit(name string, v int) int32 { return 0 } // v should be uint64
func (host) HostRecord(s *probes.UbpfSample)  {}

func main() { probes.LoadUbpf(host{}, nil) }
`
	write(filepath.Join(mod, "main.go"), host)
	build := func() (string, error) {
		cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := build()
	if err == nil {
		t.Fatal("a mistyped host function compiled")
	}
	t.Logf("compiler error, as a user sees it:\n%s", out)
	if !strings.Contains(out, "does not implement probes.UbpfHost") || !strings.Contains(out, "wrong type for method HostEmit") {
		t.Errorf("unexpected compiler error:\n%s", out)
	}
	// The same program with the right type builds.
	write(filepath.Join(mod, "main.go"), strings.Replace(host, "v int)", "v uint64)", 1))
	if out, err := build(); err != nil {
		t.Fatalf("the corrected host does not build: %v\n%s", err, out)
	}
}

// TestOneCopyPerModule: skeleton packages of one module share the
// module's runtime copy (so their wrapper types are the same types), and a
// nested module gets its own.
func TestOneCopyPerModule(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a module")
	}
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	obj, err := os.ReadFile(filepath.Join(root, "internal/skeltest/ubpf/ubpf_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(mod, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod := "module %s\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"
	write("go.mod", fmt.Sprintf(gomod, "example.com/app"))
	write("go.sum", string(sum))
	write("nested/go.mod", fmt.Sprintf(gomod, "example.com/nested"))
	write("nested/go.sum", string(sum))
	copies := map[string]int{}
	for _, pkg := range []string{"a", "b", "nested/c"} {
		write(pkg+"/ubpf.bpf.o", string(obj))
		files, err := Generate(context.Background(), Config{Input: filepath.Join(mod, pkg, "ubpf.bpf.o"), Package: filepath.Base(pkg), AOT: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if IsVendored(f.Path) {
				rel, _ := filepath.Rel(mod, f.Path)
				copies[strings.SplitN(filepath.ToSlash(rel), "/skelgenrt/", 2)[0]]++
			}
		}
	}
	if len(copies) != 2 || copies["internal"] == 0 || copies["nested/internal"] == 0 {
		t.Errorf("runtime copies written at %v, want the module's internal/ and the nested module's", copies)
	}
	if _, err := os.Stat(filepath.Join(mod, "a", "internal")); !os.IsNotExist(err) {
		t.Errorf("package a carries a copy of its own")
	}
	// The same map type from both packages: one assignable to the other.
	write("main.go", `package main

import (
	"example.com/app/a"
	"example.com/app/b"
)

func main() {
	var x a.UbpfObjects
	var y b.UbpfObjects
	x.Shared = y.Shared
	_ = x
}
`)
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet ./...: %v\n%s", err, out)
	}
}
