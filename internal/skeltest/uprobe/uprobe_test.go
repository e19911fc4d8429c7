package uprobe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

const target = `package main

import (
	"fmt"
	"os"
)

//go:noinline
func Target(i int) int { return i * 2 }

func main() {
	sum := 0
	for i := range 7 {
		sum += Target(i)
	}
	fmt.Println(os.Getpid(), sum)
}
`

// TestUprobeOnGoBinary attaches to a function of a freshly built Go binary,
// runs it and reads the call count back through the typed map.
func TestUprobeOnGoBinary(t *testing.T) {
	testenv.Kernel(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(target), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module target\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "target")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	objs, err := LoadUprobe(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if _, err := objs.CountCalls.AttachTo(bin, "main.Target", 0); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(out))
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		t.Fatalf("target printed %q", out)
	}
	n, err := objs.Calls.Lookup(uint32(pid))
	if err != nil {
		t.Fatalf("calls[%d]: %v", pid, err)
	}
	if n != 7 {
		t.Errorf("uprobe counted %d calls of main.Target, want 7", n)
	}
}
