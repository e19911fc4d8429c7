//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestOutputsOnlyRegularFiles: skelgen btfmin -o and skelgen header -o
// naming a FIFO (standing for a device such as /dev/null) or a symbolic
// link to it fail naming the path, and leave the FIFO as it was.
func TestOutputsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := btf.NewBuilder([]btf.Type{&btf.Struct{Name: "T", Size: 4, Members: []btf.Member{{Name: "f", Type: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	kernel := filepath.Join(dir, "vmlinux.btf")
	if err := os.WriteFile(kernel, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo, link := filepath.Join(dir, "fifo.h"), filepath.Join(dir, "link.h")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"btfmin", "-btf", kernel, "-decl", "struct T", "-o"}, {"header", "-o"}} {
		for _, c := range []struct{ out, want string }{
			{fifo, fifo + " is a named pipe, not a regular file"},
			{link, link + " is a symbolic link"},
		} {
			code, _, stderr := runCLI(t, "", append(cmd, c.out)...)
			if code != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("skelgen %s %s: exit %d, stderr %q; want exit 1 and %q", cmd[0], c.out, code, stderr, c.want)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("skelgen %s %s replaced the FIFO", cmd[0], c.out)
			}
		}
	}
}
