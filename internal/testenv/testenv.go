// Package testenv decides whether tests that need clang or a BPF-capable
// kernel can run here. Such tests skip with a reason when the tool is
// missing, unless SKELGEN_REQUIRE_CLANG=1 or SKELGEN_REQUIRE_KERNEL=1 is set
// (as CI does), in which case the missing tool fails the test.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
// programs (root on Linux). It mounts tracefs when needed.
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
		// Tracepoint attachment reads event IDs from tracefs.
		if err := ensureTracefs(); err != nil {
			kernel.reason = "cannot mount tracefs: " + err.Error()
		}
	})
	if kernel.reason != "" {
		skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", kernel.reason)
	}
}

// ModuleRoot returns the directory holding the skelgen go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the module root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Shared returns ../shared beside the module root (the conformance data),
// or skips the test when it is missing.
func Shared(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "..", "shared")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipped: %s not found", dir)
	}
	return dir
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
