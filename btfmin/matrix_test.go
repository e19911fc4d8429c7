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
	var archive bytes.Buffer
	zw, err := xz.NewWriter(&archive)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	raw := rawBTF(t, old)
	if err := tw.WriteHeader(&tar.Header{Name: "./5.4.0-old.btf", Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "5.4.0-old.btf.tar.xz"), archive.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not a kernel: skipped.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("kernels\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compileMatrix builds testdata/matrix.bpf.c.
func compileMatrix(t *testing.T) string {
	t.Helper()
	clang := testenv.Clang(t)
	obj := filepath.Join(t.TempDir(), "matrix.bpf.o")
	cmd := exec.Command(clang, "-g", "-O2", "-target", "bpf", "-c", filepath.Join("testdata", "matrix.bpf.c"), "-o", obj)
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
