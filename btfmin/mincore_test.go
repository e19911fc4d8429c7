package btfmin

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestMinimalKernelBTF: against the minimal BTF made for it, every
// relocation of every example and corpus object resolves to what the
// whole kernel BTF gives (target_type_id aside: its IDs are the kernel
// BTF's own), for the running kernel and the old one of cilium/ebpf's
// testdata, and the same bytes come out twice. The sizes are logged beside bpftool gen min_core_btf's when
// bpftool is installed.
func TestMinimalKernelBTF(t *testing.T) {
	kernels := map[string]string{"running": runningKernelBTF(t), "old": oldKernelBTF(t)}
	objects, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*_bpfel.o"))
	for _, n := range []string{"runqlat", "corekinds", "execsnoop", "netpeek", "filetrace"} {
		objects = append(objects, corpusObject(n))
	}
	bpftool, _ := exec.LookPath("bpftool")
	for name, path := range kernels {
		full, err := btf.LoadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objects {
			data, err := os.ReadFile(obj)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := MinimalKernelBTF(data, full)
			if err != nil {
				t.Fatalf("%s: %v", obj, err)
			}
			if again, err := MinimalKernelBTF(data, full); err != nil || !bytes.Equal(again, raw) {
				t.Errorf("%s on %s: a second minimal BTF differs (%v)", obj, name, err)
			}
			min, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: minimal BTF does not load: %v", obj, err)
			}
			want, err := resolvedRelocations(obj, full)
			if err != nil {
				t.Fatal(err)
			}
			got, err := resolvedRelocations(obj, min)
			if err != nil {
				t.Fatalf("%s against its minimal BTF: %v", obj, err)
			}
			for k := range want {
				if strings.HasPrefix(k, "target_type_id ") {
					continue
				}
				if a, b := valueSet(want, k), valueSet(got, k); a != b {
					t.Errorf("%s on %s: %s resolves to %s with the whole BTF, %s with the minimal", filepath.Base(obj), name, k, a, b)
				}
			}
			line := filepath.Base(obj) + " on " + name + ": " + sizes(raw)
			if bpftool != "" {
				out := filepath.Join(t.TempDir(), "min.btf")
				if msg, err := exec.Command(bpftool, "gen", "min_core_btf", path, out, obj).CombinedOutput(); err != nil {
					line += ", bpftool: " + strings.TrimSpace(string(msg))
				} else if b, err := os.ReadFile(out); err == nil {
					line += ", bpftool gen min_core_btf " + sizes(b)
				}
			}
			t.Log(line)
		}
	}
}

func sizes(raw []byte) string {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(raw)
	w.Close()
	return fmt.Sprintf("%d bytes (%d gzipped)", len(raw), z.Len())
}
