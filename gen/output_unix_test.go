//go:build unix

package gen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path: a file that is not a regular one, standing
// for a device such as /dev/null. Opening it would wait for the other end.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// isFIFO reports whether path is still the FIFO mkfifo made.
func isFIFO(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// TestWriteOnlyOverRegularFiles puts a FIFO, a directory, a symbolic link
// to the FIFO and one to a regular file where outputs go: WriteFiles
// refuses each, naming it, writes no file of the set and leaves each as it
// was.
func TestWriteOnlyOverRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, sub, regular := filepath.Join(dir, "fifo.h"), filepath.Join(dir, "sub.go"), filepath.Join(dir, "regular.h")
	toFIFO, toRegular := filepath.Join(dir, "to-fifo.h"), filepath.Join(dir, "to-regular.h")
	mkfifo(t, fifo)
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(regular, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{toFIFO: fifo, toRegular: regular} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join(dir, "good.go")
	for _, c := range []struct {
		file File
		want string
	}{
		{File{Path: fifo, Data: []byte("new")}, fifo + " is a named pipe, not a regular file"},
		{File{Path: sub, Data: []byte("new")}, sub + " is a directory, not a regular file"},
		{File{Path: toFIFO, Data: []byte("new")}, toFIFO + " is a symbolic link"},
		{File{Path: toRegular, Data: []byte("new")}, toRegular + " is a symbolic link"},
		{File{Path: fifo, Remove: true}, fifo + " is a named pipe, not a regular file"},
	} {
		err := WriteFiles([]File{{Path: good, Data: []byte("new")}, c.file})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
		if _, err := os.Lstat(good); !os.IsNotExist(err) {
			t.Errorf("%s written beside the refused %s", good, c.file.Path)
		}
	}
	if !isFIFO(fifo) {
		t.Errorf("%s is no longer a FIFO", fifo)
	}
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		t.Errorf("%s is no longer a directory", sub)
	}
	for _, link := range []string{toFIFO, toRegular} {
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link", link)
		}
	}
	if data, _ := os.ReadFile(regular); string(data) != "old" {
		t.Errorf("%s = %q, want the old contents", regular, data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 {
		t.Errorf("%d entries in the directory, want the 5 it had", len(entries))
	}
}

// TestGenerateBesideFIFO puts a FIFO where a translation of an earlier run
// would be: Generate leaves it unread (opening it would block) and
// unreplaced.
func TestGenerateBesideFIFO(t *testing.T) {
	mod, input := hostileModule(t)
	aot := filepath.Join(mod, "pkg", "hostile_bpfel_aot.go")
	mkfifo(t, aot)
	files, err := Generate(context.Background(), Config{Input: input, Package: "p", ImportRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	if !isFIFO(aot) {
		t.Errorf("%s is no longer a FIFO", aot)
	}
}

// TestCacheEntryFIFO puts a FIFO where a run's cache entry goes: Save does
// not replace it, and Current neither opens it nor takes it for an entry.
func TestCacheEntryFIFO(t *testing.T) {
	r := &CacheRun{c: &Cache{dir: t.TempDir()}, key: "k", reads: map[string]bool{}}
	mkfifo(t, r.path())
	r.Read(filepath.Join("testdata", "x.bpf.c"))
	r.Save(nil)
	if !isFIFO(r.path()) {
		t.Fatalf("Save replaced the FIFO %s", r.path())
	}
	if _, _, ok := r.Current(); ok {
		t.Error("a FIFO is taken for a cache entry")
	}
}
