package gen

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/btfmin"
	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// kernelDir is a directory with the four test kernels' BTF: the running
// kernel's, cilium/ebpf's old test kernel's and Debian's 6.1 and 6.12
// cloud kernels'.
func kernelDir(t *testing.T) string {
	t.Helper()
	running := testenv.KernelBTF(t)
	debian := testenv.DebianKernels(t)
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{running: strings.TrimSpace(string(release)) + ".btf", testenv.OldKernelBTF(t): "cilium-testdata-old.btf"}
	deb, _ := filepath.Glob(filepath.Join(debian, "*-cloud-amd64.btf"))
	for _, f := range deb {
		files[f] = filepath.Base(f)
	}
	for from, to := range files {
		if err := os.Symlink(from, filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestKernelBTFArchive makes the embedded kernel BTF of every example and
// corpus object for the four test kernels and reads it back as Load does:
// each kernel's entry is the object's minimal BTF for it, identical
// minimal BTFs are stored once, the same inputs give the same bytes, and
// a big-endian object carries none of these little-endian kernels. It logs
// the sizes beside bpftool gen min_core_btf's on the same inputs.
func TestKernelBTFArchive(t *testing.T) {
	dir := kernelDir(t)
	ks, err := btfmin.ReadKernelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := testenv.ModuleRoot(t)
	objects, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*_bpfel.o"))
	corpus, _ := filepath.Glob(filepath.Join(root, "testdata", "corpus", "*.bpf.o"))
	objects = testenv.Sample(append(objects, corpus...), 4)
	bpftool, _ := exec.LookPath("bpftool")
	var report strings.Builder
	fmt.Fprintf(&report, "%-22s %-30s %9s %9s %9s %9s\n", "object", "kernel", "minimal", "gzipped", "bpftool", "gzipped")
	for _, obj := range objects {
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(obj)
		ar, releases, err := KernelBTFArchive(data, ks)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if again, _, err := KernelBTFArchive(data, ks); err != nil || !bytes.Equal(again, ar) {
			t.Errorf("%s: a second archive differs (%v)", name, err)
		}
		read, err := bridge.KernelBTFReleases(ar)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(releases) != len(ks) || strings.Join(read, " ") != strings.Join(releases, " ") {
			t.Errorf("%s: releases %q, read back %q, want the %d kernels", name, releases, read, len(ks))
		}
		distinct := map[string]bool{}
		bpftoolSum := 0
		for _, k := range ks {
			want, err := btfmin.MinimalKernelBTF(data, k.Spec)
			if err != nil {
				t.Fatal(err)
			}
			distinct[string(want)] = true
			got := archiveEntry(t, ar, k.Name)
			if !bytes.Equal(got, want) {
				t.Errorf("%s on %s: the archive holds %d bytes, not the %d of its minimal BTF", name, k.Name, len(got), len(want))
			}
			line := fmt.Sprintf("%-22s %-30s %9d %9d", name, k.Name, len(want), gzipLen(want))
			if bpftool != "" {
				out := filepath.Join(t.TempDir(), "min.btf")
				if msg, err := exec.Command(bpftool, "gen", "min_core_btf", k.Path, out, obj).CombinedOutput(); err != nil {
					line += " bpftool: " + strings.TrimSpace(string(msg))
				} else if b, err := os.ReadFile(out); err == nil {
					line += fmt.Sprintf(" %9d %9d", len(b), gzipLen(b))
					bpftoolSum += gzipLen(b)
				}
			}
			report.WriteString(line + "\n")
		}
		if n := regularEntries(t, ar); n != len(distinct) {
			t.Errorf("%s: %d files in the archive for %d distinct minimal BTFs", name, n, len(distinct))
		}
		fmt.Fprintf(&report, "%-22s %-30s %9s %9d %9s %9d  (archive: %d distinct; bpftool's files gzipped one by one, summed)\n", name, "all kernels embedded", "", len(ar), "", bpftoolSum, len(distinct))
		if per := len(ar) / len(ks); per > 4096 {
			t.Errorf("%s: %d bytes embedded per kernel, want a few KB at most", name, per)
		}
	}
	t.Logf("embedded kernel BTF:\n%s", report.String())

	be, err := os.ReadFile(filepath.Join(root, "examples", "execsnoop", "execsnoop_bpfeb.o"))
	if err != nil {
		t.Fatal(err)
	}
	if _, releases, err := KernelBTFArchive(be, ks); err != nil || len(releases) != 0 {
		t.Errorf("big-endian object: releases %q (%v), want none of the little-endian kernels", releases, err)
	}
}

func gzipLen(b []byte) int {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return z.Len()
}

// archiveEntry returns the data of release's entry, following a hard link.
func archiveEntry(t *testing.T, ar []byte, release string) []byte {
	t.Helper()
	data := map[string][]byte{}
	for h, b := range tarEntries(t, ar) {
		if h.Typeflag == tar.TypeLink {
			b = data[h.Linkname]
		}
		data[h.Name] = b
	}
	return data[release+".btf"]
}

func regularEntries(t *testing.T, ar []byte) int {
	n := 0
	for h := range tarEntries(t, ar) {
		if h.Typeflag == tar.TypeReg {
			n++
		}
	}
	return n
}

func tarEntries(t *testing.T, ar []byte) func(func(*tar.Header, []byte) bool) {
	return func(yield func(*tar.Header, []byte) bool) {
		zr, err := gzip.NewReader(bytes.NewReader(ar))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if !yield(h, b) {
				return
			}
		}
	}
}

// TestGenerateBTFFor: -btf-for writes the archive beside the skeleton,
// which embeds it, lists its kernels and loads with it; a run without
// the flag removes the archive an earlier one wrote.
func TestGenerateBTFFor(t *testing.T) {
	kernels := testenv.DebianKernels(t)
	root := testenv.ModuleRoot(t)
	out := t.TempDir()
	obj := filepath.Join(out, "execsnoop.bpf.o")
	data, err := os.ReadFile(filepath.Join(root, "examples", "execsnoop", "execsnoop_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: obj, Package: "main", Stem: "execsnoop", ImportRuntime: true, BTFFor: kernels}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		got[filepath.Base(f.Path)] = f.Data
	}
	ar, ok := got["execsnoop_bpfel_btf.tar.gz"]
	if !ok {
		t.Fatalf("no execsnoop_bpfel_btf.tar.gz among %d files", len(files))
	}
	releases, err := bridge.KernelBTFReleases(ar)
	if err != nil {
		t.Fatal(err)
	}
	lits := make([]string, len(releases))
	for i, r := range releases {
		lits[i] = fmt.Sprintf("%q", r)
	}
	src := string(got["execsnoop_bpfel.go"])
	for _, want := range []string{
		"//go:embed execsnoop_bpfel_btf.tar.gz\nvar execsnoopKernelBTF []byte\n",
		"func ExecsnoopKernels() []string {\n\treturn []string{" + strings.Join(lits, ", ") + "}\n}\n",
		"bridge.LoadKernelOnly(s.Spec, bridge.WithKernelBTF(opts, execsnoopKernelBTF), s.Programs.EnterExecve, s.Programs.ExitExecve)",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the skeleton lacks %q", want)
		}
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	cfg.BTFFor = ""
	if files, err = Generate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	removed := false
	for _, f := range files {
		removed = removed || f.Remove && filepath.Base(f.Path) == "execsnoop_bpfel_btf.tar.gz"
		if filepath.Base(f.Path) == "execsnoop_bpfel.go" && bytes.Contains(f.Data, []byte("KernelBTF")) {
			t.Error("the skeleton without -btf-for mentions kernel BTF")
		}
	}
	if !removed {
		t.Error("a run without -btf-for keeps the archive an earlier run wrote")
	}
	if _, err := Generate(context.Background(), Config{Input: obj, Package: "main", ImportRuntime: true, BTFFor: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "-btf-for: ") {
		t.Errorf("-btf-for an empty directory: %v, want an error", err)
	}
}
