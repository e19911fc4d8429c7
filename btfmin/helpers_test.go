package btfmin

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpus lists the testdata tools; each has NAME.bpf.c and its committed
// build NAME.bpf.o.
var corpus = []string{"execsnoop", "runqlat", "corekinds", "netpeek"}

// corpusDir is the top-level testdata/corpus: the btfmin corpus, which the
// command's tests use too.
var corpusDir = filepath.Join("..", "testdata", "corpus")

func corpusObject(name string) string { return filepath.Join(corpusDir, name+".bpf.o") }
func corpusSource(name string) string { return filepath.Join(corpusDir, name+".bpf.c") }

var corpusCFlags = []string{"-D__TARGET_ARCH_x86"}

// runningKernelBTF returns /sys/kernel/btf/vmlinux (see testenv.KernelBTF).
func runningKernelBTF(t testing.TB) string {
	t.Helper()
	return testenv.KernelBTF(t)
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

// mustWrite writes c's header without a comment, failing the test on an
// error.
func mustWrite(t testing.TB, c *chooser, mode Mode, guard string) string {
	t.Helper()
	h, err := c.write(mode, guard, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// rawBTF marshals types as raw BTF.
func rawBTF(t testing.TB, types ...btf.Type) []byte {
	t.Helper()
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// specOf marshals types and loads them back, as btfmin reads BTF.
func specOf(t testing.TB, types ...btf.Type) *btf.Spec {
	t.Helper()
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(rawBTF(t, types...)))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}
