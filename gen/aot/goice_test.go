package aot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
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
	dir := t.TempDir()
	writeModule(t, dir, testenv.ModuleRoot(t), "goice", map[string][]byte{"p.go": src.Bytes()})
	out, err := goIn(dir, "build", ".")
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
