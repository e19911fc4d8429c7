package btfmin

import (
	"bytes"
	"encoding/binary"
	"flag"
	"path/filepath"
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

// oldKernelBTF is cilium/ebpf's test vmlinux BTF (see
// testenv.OldKernelBTF).
func oldKernelBTF(t testing.TB) string {
	t.Helper()
	return testenv.OldKernelBTF(t)
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
