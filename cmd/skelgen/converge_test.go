package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestHeaderGenerateConverges: with -header, one generate after the
// source reads a new kernel field, and one after it stops reading it
// again, leaves files that skelgen check finds current. The object must
// be compiled against the header the run writes: compiled against the
// previous, larger header, its BTF still declared the field.
func TestHeaderGenerateConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: loads packages")
	}
	testenv.Clang(t)
	testenv.KernelBTF(t)
	mod := scratchModule(t, "corehdr")
	t.Chdir(mod)
	t.Setenv("GOFLAGS", "-mod=mod")
	src := filepath.Join(mod, "corehdr", "corehdr.bpf.c")
	const read = "\tinfo.pid = BPF_CORE_READ(task, tgid);\n"
	orig := readHolding(t, src, read)
	added := bytes.Replace(orig, []byte(read), []byte(read+"\tinfo.uid ^= BPF_CORE_READ(task, pid);\n"), 1)
	hdr := filepath.Join(mod, "corehdr", "vmlinux.h")
	// The copy's header is the one generate writes for the original
	// source, with these flags: skelgen check ./... keeps it so.
	h, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"original": string(h)}
	for _, step := range []struct {
		name string
		src  []byte
	}{{"field added", added}, {"field removed", orig}} {
		write(t, src, step.src)
		if code, out, stderr := runCLI(t, "", "-runtime", "import", "-header", "vmlinux.h", src); code != 0 {
			t.Fatalf("%s: generate: exit %d\n%s%s", step.name, code, out, stderr)
		}
		if code, out, stderr := runCLI(t, "", "check", "./..."); code != 0 {
			t.Errorf("%s: check after one generate: exit %d\n%s%s", step.name, code, out, stderr)
		}
		h, err := os.ReadFile(hdr)
		if err != nil {
			t.Fatal(err)
		}
		headers[step.name] = string(h)
	}
	if !strings.Contains(headers["field added"], "pid_t pid;") || strings.Contains(headers["field removed"], "pid_t pid;") {
		t.Errorf("the header does not follow the source: task_struct.pid declared %v with the field read, %v after",
			strings.Contains(headers["field added"], "pid_t pid;"), strings.Contains(headers["field removed"], "pid_t pid;"))
	}
	if headers["field removed"] != headers["original"] {
		t.Errorf("the header after removing the field differs from the original one")
	}
}

// TestGenerateKeepsUnchangedFiles: a generate that makes the bytes on disk
// already writes no file: every modification time stays, and the command
// says the files are unchanged.
func TestGenerateKeepsUnchangedFiles(t *testing.T) {
	testenv.Clang(t)
	testenv.KernelBTF(t)
	mod := scratchModule(t, "corehdr")
	dir := filepath.Join(mod, "corehdr")
	src := filepath.Join(dir, "corehdr.bpf.c")
	args := []string{"-runtime", "import", "-header", "vmlinux.h", "-makebase", dir, src}
	if code, out, stderr := runCLI(t, "", args...); code != 0 {
		t.Fatalf("generate: exit %d\n%s%s", code, out, stderr)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("second generate: exit %d\n%s%s", code, out, stderr)
	}
	// vmlinux.h, two Go files, two objects and two depfiles.
	if strings.Contains(out, "wrote") || !strings.Contains(out, "7 files unchanged") {
		t.Errorf("second generate says:\n%s", out)
	}
	after, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(entries) {
		t.Errorf("%d files in the directory after the second generate, %d before", len(after), len(entries))
	}
	for _, e := range after {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(old) {
			t.Errorf("%s rewritten by a generate that changed nothing (modified %v)", e.Name(), fi.ModTime())
		}
	}
}
