package aot

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/runtime"
)

// TestGoCompilerCrash builds the translation of testdata/goice.hex, a
// random program (randomProgram(1796151743515081452, 89) of an earlier
// generator) whose translation made go1.26.8's register allocator fail:
// "internal compiler error: can't find source for ... ArgIntReg". Its
// "mov %r6, %r1" made r1 and r6 one SSA value, which entered a loop as r1
// while the loop wrote r1, called through callx and kept r6 for later;
// the translation now passes such a move through runtime.Opaque (see
// opaqueMoves), and the program must build and agree in both engines, with
// budgets that run out at several places and one that lasts.
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
	code, err := Translate(&runtime.ProgramSpec{Name: "goice", Instructions: insns, Maps: placeholderMaps(t, "fuzz", nil)}, Options{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if src := fmt.Sprintf("%#v", code); !strings.Contains(src, "r6 = runtime.Opaque(r1)") {
		t.Error(`the translation of "mov %r6, %r1" is not r6 = runtime.Opaque(r1)`)
	}
	mem, _ := hex.DecodeString("de8aaa1866734bc0d1cee6928468554724909ae3879d3887ce8d1d5e157a52b2841b207e03bead8511a81aefaf83c6ce3785048f8f51d6d85fc7a4225da4059d")
	var cases []aotCase
	for _, budget := range []uint64{1, 5, 20, 60, 200, 4000} {
		cases = append(cases, aotCase{Name: fmt.Sprintf("goice/budget=%d", budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
	}
	for _, l := range runAgreement(t, cases, true).Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
		t.Logf("%s: %s", l.Name, errorClass(l.Interp.Err))
	}
}
