package aot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

// TestGoCompilerCrash builds the translation of testdata/goice.hex, a
// random program (randomProgram(1796151743515081452, 89) of a generator
// that wrote compare trees) on which go1.26.8's register allocator fails:
// "internal compiler error: can't find source for ... ArgIntReg".
// The crash needs its "mov %r6, %r1" and a callx that calls its own
// function, and comes with or without the tree switches. While the Go
// toolchain crashes, the test says so and skips; once it builds, the
// program must agree in both engines like any other.
func TestGoCompilerCrash(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "goice.hex"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	insns, err := runtime.DecodeInstructions(raw, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	code, err := Translate(&runtime.ProgramSpec{Name: "goice", Instructions: insns, Maps: placeholderMaps(t, "fuzz")}, Options{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	f := jen.NewFile("p")
	f.Add(code)
	var src bytes.Buffer
	if err := f.Render(&src); err != nil {
		t.Fatal(err)
	}
	root := testenv.ModuleRoot(t)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := fmt.Sprintf("module goice\n\ngo 1.26\n\nrequire github.com/skelgen/skelgen v0.0.0\n\nreplace github.com/skelgen/skelgen => %s\n", root)
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "p.go": src.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := build.CombinedOutput()
	if err != nil {
		if i := bytes.Index(out, []byte("internal compiler error")); i >= 0 {
			line, _, _ := bytes.Cut(out[i:], []byte("\n"))
			t.Skipf("%s still crashes on this translation: %s", goruntime.Version(), line)
		}
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mem, _ := hex.DecodeString("de8aaa1866734bc0d1cee6928468554724909ae3879d3887ce8d1d5e157a52b2841b207e03bead8511a81aefaf83c6ce3785048f8f51d6d85fc7a4225da4059d")
	agreeWithOutcomes(t, []aotCase{{Name: "goice", Insns: insns, Mem: mem, Setup: "fuzz", Budget: 4000}})
}
