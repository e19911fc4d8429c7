package btfmin

import (
	"compress/gzip"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpus lists the testdata tools; each has NAME.bpf.c and its committed
// build NAME.bpf.o.
var corpus = []string{"execsnoop", "runqlat", "corekinds", "netpeek"}

func corpusObject(name string) string { return filepath.Join("testdata", name+".bpf.o") }
func corpusSource(name string) string { return filepath.Join("testdata", name+".bpf.c") }

var corpusCFlags = []string{"-D__TARGET_ARCH_x86"}

// runningKernelBTF returns /sys/kernel/btf/vmlinux, skipping (or failing
// under SKELGEN_REQUIRE_KERNEL=1) when the kernel does not expose it.
func runningKernelBTF(t testing.TB) string {
	t.Helper()
	const path = "/sys/kernel/btf/vmlinux"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("SKELGEN_REQUIRE_KERNEL") == "1" {
			t.Fatalf("%s: %v", path, err)
		}
		t.Skipf("skipped: no kernel BTF: %v", err)
	}
	return path
}

// oldKernelBTF unpacks cilium/ebpf's test vmlinux BTF (an older kernel)
// from the module cache.
func oldKernelBTF(t testing.TB) string {
	t.Helper()
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	gz := filepath.Join(strings.TrimSpace(string(cache)), "github.com", "cilium", "ebpf@v0.22.0", "btf", "testdata", "vmlinux.btf.gz")
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

var binaryLE = binary.LittleEndian
