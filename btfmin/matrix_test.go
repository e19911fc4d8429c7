package btfmin

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/ulikunitz/xz"

	"github.com/skelgen/skelgen/internal/testenv"
)

// matrixKernels writes two synthetic kernels into a directory: "old" has
// task_struct.state and no bpf_iter_num, "new" has task_struct.__state
// and bpf_iter_num (as Linux 5.14 and 6.4 changed them). The old one is
// a BTFHub-style .btf.tar.xz archive, the new one raw BTF.
func matrixKernels(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	i64 := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	u64 := &btf.Int{Name: "long long unsigned int", Size: 8}
	old := &btf.Struct{Name: "task_struct", Size: 16, Members: []btf.Member{
		{Name: "pid", Type: i32}, {Name: "state", Type: i64, Offset: 64},
	}}
	newer := &btf.Struct{Name: "task_struct", Size: 16, Members: []btf.Member{
		{Name: "pid", Type: i32}, {Name: "__state", Type: u32, Offset: 32},
	}}
	iter := &btf.Struct{Name: "bpf_iter_num", Size: 8, Members: []btf.Member{
		{Name: "__opaque", Type: &btf.Array{Index: u32, Type: u64, Nelems: 1}},
	}}
	if err := os.WriteFile(filepath.Join(dir, "6.4.0-new.btf"), rawBTF(t, newer, iter), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := rawBTF(t, old)
	archive := xzTar(t, tarEntry{tar.Header{Name: "./5.4.0-old.btf", Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg}, raw})
	if err := os.WriteFile(filepath.Join(dir, "5.4.0-old.btf.tar.xz"), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	// Not a kernel: skipped.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("kernels\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type tarEntry struct {
	h    tar.Header
	data []byte
}

// xzTar returns an xz-compressed tar archive of entries. The last one may
// claim more data than it has: the archive ends after what it has.
func xzTar(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var archive bytes.Buffer
	zw, err := xz.NewWriter(&archive)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if last := entries[len(entries)-1]; last.h.Size > int64(len(last.data)) {
		// tar.Writer would ask for the rest: end the archive by hand.
		_, err = zw.Write(make([]byte, 1024))
	} else {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return archive.Bytes()
}

// compileMatrix builds testdata/matrix.bpf.c.
func compileMatrix(t *testing.T) string {
	t.Helper()
	return compileBPF(t, filepath.Join("testdata", "matrix.bpf.c"))
}

// compileBPF builds the C source src into an object in a temporary
// directory, named as src with .o for .c.
func compileBPF(t *testing.T, src string) string {
	t.Helper()
	clang := testenv.Clang(t)
	obj := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c")+".o")
	cmd := exec.Command(clang, "-g", "-O2", "-target", "bpf", "-c", src, "-o", obj)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return obj
}

func TestCheckKernels(t *testing.T) {
	obj := compileMatrix(t)
	kernels, err := ReadKernelDir(matrixKernels(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(kernels) != 2 || kernels[0].Name != "5.4.0-old" || kernels[1].Name != "6.4.0-new" {
		t.Fatalf("kernels %+v, want 5.4.0-old and 6.4.0-new", kernels)
	}
	checks, err := CheckKernels(obj, kernels)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]Status{}
	var unguarded *ProgramCheck
	for _, kc := range checks {
		for i, p := range kc.Programs {
			status[kc.Kernel+" "+p.Name] = p.Status()
			if kc.Kernel == "5.4.0-old" && p.Name == "unguarded" {
				unguarded = &kc.Programs[i]
			}
		}
	}
	want := map[string]Status{
		"5.4.0-old unguarded": Failed, "5.4.0-old guarded": Guarded, "5.4.0-old newtype": Guarded,
		"6.4.0-new unguarded": Resolved, "6.4.0-new guarded": Guarded, "6.4.0-new newtype": Resolved,
	}
	for k, w := range want {
		if status[k] != w {
			t.Errorf("%s: %s, want %s", k, status[k], w)
		}
	}
	if len(status) != len(want) {
		t.Errorf("checked %v, want %d programs", status, len(want))
	}
	if unguarded == nil || len(unguarded.Failures) != 1 {
		t.Fatalf("unguarded on the old kernel: %+v, want one failure", unguarded)
	}
	f := unguarded.Failures[0]
	for _, s := range []string{"matrix.bpf.c:", "BPF_CORE_READ(t, __state)"} {
		if !strings.Contains(f.Line, s) {
			t.Errorf("line %q does not contain %q", f.Line, s)
		}
	}
	if f.Access != "struct task_struct[0].__state" {
		t.Errorf("access %q", f.Access)
	}
	if want := `struct "task_struct" has no member __state; it has state at offset 8`; f.Instead != want {
		t.Errorf("instead %q, want %q", f.Instead, want)
	}
	var b strings.Builder
	if n := WriteMatrix(&b, checks); n != 1 {
		t.Errorf("WriteMatrix counted %d failing programs, want 1:\n%s", n, b.String())
	}
	t.Logf("\n%s", b.String())
}

func TestCheckKernelsMissingType(t *testing.T) {
	obj := compileMatrix(t)
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	dir := t.TempDir()
	// A kernel with no task_struct at all: the unguarded read fails,
	// naming the missing struct.
	if err := os.WriteFile(filepath.Join(dir, "bare.btf"), rawBTF(t, u32), 0o644); err != nil {
		t.Fatal(err)
	}
	kernels, err := ReadKernelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := CheckKernels(obj, kernels)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checks[0].Programs {
		if p.Name != "unguarded" {
			continue
		}
		if p.Status() != Failed || len(p.Failures) != 1 || p.Failures[0].Instead != "the kernel has no struct task_struct" {
			t.Errorf("unguarded: %s %+v", p.Status(), p.Failures)
		}
		return
	}
	t.Fatal("no program unguarded")
}

func TestReadKernelDirErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadKernelDir(dir); err == nil || !strings.Contains(err.Error(), "no kernel BTF file") {
		t.Errorf("empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.btf"), []byte{0x9f, 0xeb, 1, 0, 24, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKernelDir(dir); err == nil || !strings.Contains(err.Error(), "broken.btf") {
		t.Errorf("truncated BTF: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.btf"), []byte{0xfd, '7', 'z', 'X', 'Z', 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKernelDir(dir); err == nil || !strings.Contains(err.Error(), "broken.btf") {
		t.Errorf("truncated archive: %v", err)
	}
}

// TestKernelArchiveEntries reads archives with entries of every kind.
// Each entry that claims 4 GiB (which the archive does not hold) is refused
// from its header, naming the archive and the entry: skipping it would
// decompress that much. Directories and links of no size are skipped.
func TestKernelArchiveEntries(t *testing.T) {
	raw := rawBTF(t, &btf.Int{Name: "int", Size: 4})
	reg := tarEntry{tar.Header{Name: "./6.1.0-1.btf", Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg}, raw}
	claim := func(typ byte) tarEntry {
		return tarEntry{h: tar.Header{Name: "./6.1.0-1.btf", Linkname: "other", Mode: 0o644, Size: 4 << 30, Typeflag: typ}}
	}
	for _, c := range []struct {
		entries []tarEntry
		want    string // empty: the archive reads
	}{
		{[]tarEntry{{h: tar.Header{Name: "./", Mode: 0o755, Typeflag: tar.TypeDir}}, {h: tar.Header{Name: "./latest", Linkname: "6.1.0-1.btf", Typeflag: tar.TypeSymlink}}, reg}, ""},
		{[]tarEntry{claim(tar.TypeCont)}, "entry ./6.1.0-1.btf: type '7', not a regular file"},
		{[]tarEntry{claim('V')}, "entry ./6.1.0-1.btf: type 'V', not a regular file"},
		{[]tarEntry{claim(tar.TypeSymlink)}, "entry ./6.1.0-1.btf: type '2' claims 4294967296 bytes of data"},
		{[]tarEntry{claim(tar.TypeDir)}, "entry ./6.1.0-1.btf: type '5' claims 4294967296 bytes"},
		{[]tarEntry{claim(tar.TypeChar)}, "entry ./6.1.0-1.btf: type '3' claims 4294967296 bytes"},
		{[]tarEntry{reg, claim(tar.TypeLink)}, "entry ./6.1.0-1.btf: type '1' claims 4294967296 bytes"},
		{[]tarEntry{claim(tar.TypeReg)}, "entry ./6.1.0-1.btf: 4294967296 bytes, more than 536870912"},
		{[]tarEntry{reg, reg}, "more than one file in the archive (./6.1.0-1.btf)"},
	} {
		path := filepath.Join(t.TempDir(), "6.1.0-1.btf.tar.xz")
		if err := os.WriteFile(path, xzTar(t, c.entries...), 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := ReadKernelFile(path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v", err)
		case c.want == "" && !bytes.Equal(data, raw):
			t.Errorf("%s: read %d bytes, want the entry's %d", path, len(data), len(raw))
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), path+": "+c.want)):
			t.Errorf("got %v, want an error with %q", err, path+": "+c.want)
		}
	}
}

// TestReadKernelELF reads a kernel from an ELF file's .BTF section (a BPF
// object stands in for vmlinux) and names it from the file name.
func TestReadKernelELF(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(corpusObject("execsnoop"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vmlinux-6.1.0-test"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ks, err := ReadKernelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].Name != "6.1.0-test" {
		t.Fatalf("%+v", ks)
	}
	if _, err := ks[0].Spec.AnyTypeByName("task_struct"); err != nil {
		t.Error(err)
	}
}

// TestDebianKernels checks the examples and the corpus against the Debian
// cloud kernels testdata/kernels/fetch.sh fetches (CI fetches them): every
// program loads, runqlat's fallback read of task_struct.state is guarded
// on each (all have __state).
func TestDebianKernels(t *testing.T) {
	kernels, err := ReadKernelDir(testenv.DebianKernels(t))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := filepath.Glob(filepath.Join("..", "examples", "*", "*_bpfel.o"))
	if err != nil || len(objects) == 0 {
		t.Fatalf("no example objects: %v", err)
	}
	objects = append(objects, corpusObject("runqlat"), corpusObject("corekinds"))
	var checks []KernelCheck
	for _, o := range objects {
		c, err := CheckKernels(o, kernels)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, c...)
	}
	var b strings.Builder
	if n := WriteMatrix(&b, checks); n != 0 {
		t.Errorf("%d programs fail:\n%s", n, b.String())
	}
	t.Logf("\n%s", b.String())
	guarded := 0
	for _, kc := range checks {
		for _, p := range kc.Programs {
			if p.Name == "handle_sched_switch" && p.Status() == Guarded {
				guarded++
			}
		}
	}
	if guarded != len(kernels) {
		t.Errorf("runqlat's handle_sched_switch guarded on %d of %d kernels", guarded, len(kernels))
	}
}
