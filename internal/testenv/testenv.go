// Package testenv decides whether tests that need clang or a BPF-capable
// kernel can run here. Such tests skip with a reason when the tool is
// missing, unless SKELGEN_REQUIRE_CLANG=1 or SKELGEN_REQUIRE_KERNEL=1 is set
// (as CI does), in which case the missing tool fails the test.
package testenv

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
)

func required(env string) bool { return os.Getenv(env) == "1" }

func skipOrFail(t testing.TB, env, reason string) {
	t.Helper()
	if required(env) {
		t.Fatalf("%s is set, but: %s", env, reason)
	}
	t.Skip("skipped: " + reason)
}

// Clang returns the path of clang-19 (or clang), or skips the test.
func Clang(t testing.TB) string {
	t.Helper()
	for _, c := range []string{"clang-19", "clang"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	skipOrFail(t, "SKELGEN_REQUIRE_CLANG", "neither clang-19 nor clang is on PATH")
	return ""
}

var kernel struct {
	once   sync.Once
	reason string
}

// Kernel skips the test unless the process can create BPF maps and load
// programs (root on Linux). It does not mount tracefs: skeletons do, as
// on a machine just booted; tests that attach tracepoints through
// cilium/ebpf directly call Tracefs.
func Kernel(t testing.TB) {
	t.Helper()
	kernel.once.Do(func() {
		if runtime.GOOS != "linux" {
			kernel.reason = "BPF needs Linux"
			return
		}
		if os.Geteuid() != 0 {
			kernel.reason = "BPF tests need root"
			return
		}
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
		if err != nil {
			kernel.reason = "cannot create a BPF map: " + err.Error()
			return
		}
		m.Close()
	})
	if kernel.reason != "" {
		skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", kernel.reason)
	}
}

// ModuleRoot returns the directory holding the skelgen go.mod: the first
// directory at or above the test's working directory (go test runs a test
// in its package directory) whose go.mod declares the skelgen module.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(data) == skelgenModule {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			t.Fatalf("no go.mod of %s at or above %s", skelgenModule, dir)
		}
		d = parent
	}
}

const skelgenModule = "github.com/skelgen/skelgen"

// modulePath returns the module line's path of a go.mod.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Conformance returns the bpf_conformance suite in ../shared/conformance
// (holding tests/ and negative/), beside the module root. When it is
// missing the test skips, or fails when SKELGEN_REQUIRE_CLANG or
// SKELGEN_REQUIRE_KERNEL is set: CI must not pass on a checkout without
// the suite.
func Conformance(t testing.TB) string {
	t.Helper()
	return filepath.Dir(sharedDir(t, filepath.Join("conformance", "bpf_conformance", "tests")))
}

// ConformanceSeeds returns the conformance suite's directory for seeding
// a fuzz target, or "" when it is missing: a fuzz target still runs
// without its seeds, so this neither skips nor fails.
func ConformanceSeeds(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "..", "shared", "conformance", "bpf_conformance")
	if _, err := os.Stat(filepath.Join(dir, "tests")); err != nil {
		t.Logf("no conformance seeds: %v", err)
		return ""
	}
	return dir
}

// sharedDir returns ../shared/probe, which must exist.
func sharedDir(t testing.TB, probe string) string {
	t.Helper()
	return sharedIn(t, ModuleRoot(t), probe)
}

func sharedIn(t testing.TB, root, probe string) string {
	t.Helper()
	dir := filepath.Join(root, "..", "shared")
	want := filepath.Join(dir, probe)
	if _, err := os.Stat(want); err != nil {
		reason := fmt.Sprintf("%s not found beside the module root: %v", want, err)
		for _, env := range []string{"SKELGEN_REQUIRE_CLANG", "SKELGEN_REQUIRE_KERNEL"} {
			if required(env) {
				t.Fatalf("%s is set, but: %s", env, reason)
			}
		}
		t.Skip("skipped: " + reason)
	}
	return want
}

// BPFFS returns a fresh directory in a mounted bpffs, mounting
// /sys/fs/bpf when needed. Call Kernel first.
func BPFFS(t testing.TB) string {
	t.Helper()
	const root = "/sys/fs/bpf"
	if !isBPFFS(root) {
		if err := mountBPFFS(root); err != nil {
			skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", "no bpffs at "+root+": "+err.Error())
		}
	}
	dir, err := os.MkdirTemp(root, "skelgen-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// KernelBTF returns the running kernel's BTF, /sys/kernel/btf/vmlinux, or
// skips the test (failing under SKELGEN_REQUIRE_KERNEL=1) without it.
func KernelBTF(t testing.TB) string {
	t.Helper()
	const path = "/sys/kernel/btf/vmlinux"
	if _, err := os.Stat(path); err != nil {
		skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", "no kernel BTF: "+err.Error())
	}
	return path
}

// OldKernelBTF unpacks cilium/ebpf's test vmlinux BTF (an older kernel)
// from the module cache.
func OldKernelBTF(t testing.TB) string {
	t.Helper()
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	gz := filepath.Join(strings.TrimSpace(string(cache)), "github.com", "cilium", "ebpf@"+ciliumVersion, "btf", "testdata", "vmlinux.btf.gz")
	f, err := os.Open(gz)
	if err != nil {
		t.Fatalf("old kernel BTF: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "vmlinux-old.btf")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, zr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ciliumVersion is the cilium/ebpf version of go.mod, whose module in the
// cache holds the test BTF.
const ciliumVersion = "v0.22.0"

// DebianKernels returns testdata/kernels, holding the BTF of the Debian
// cloud kernels its fetch.sh fetches (not committed: about 4 MB each), or
// skips the test without them (failing under SKELGEN_REQUIRE_KERNEL=1:
// .ci/run fetches them).
func DebianKernels(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "testdata", "kernels")
	found, _ := filepath.Glob(filepath.Join(dir, "*-cloud-amd64.btf"))
	if len(found) < 2 {
		skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", "no Debian kernel BTF in "+dir+" (run its fetch.sh)")
	}
	return dir
}

// Cgroup2 is where the cgroup2 hierarchy is mounted; the test skips when
// it is mounted nowhere (or fails under SKELGEN_REQUIRE_KERNEL=1).
func Cgroup2(t testing.TB) string {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == "cgroup2" {
			return f[1]
		}
	}
	skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", "no cgroup2 hierarchy mounted")
	return ""
}

// CC returns a C compiler for programs linked with libbpf (cc, gcc, else
// clang-19), or "" and why there is none. SkipCC turns the reason into a
// skip.
func CC() (path, missing string) {
	for _, c := range []string{"cc", "gcc", "clang-19"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, ""
		}
	}
	return "", "no C compiler (cc, gcc or clang-19) on PATH"
}

// SkipCC skips the test because a C program cannot be built (missing
// says why), or fails it when SKELGEN_REQUIRE_CLANG=1: CI installs the
// compilers and libbpf-dev.
func SkipCC(t testing.TB, missing string) {
	t.Helper()
	skipOrFail(t, "SKELGEN_REQUIRE_CLANG", missing)
}
