package gen

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/internal/conformance"
	"github.com/skelgen/skelgen/runtime"
)

const conformanceDir = "../shared/conformance/bpf_conformance/tests"

// TestAOTConformance translates every program of the conformance suite
// into one Go package, builds and runs it, and compares r0, the memory the
// program was given and the error with the interpreter's.
func TestAOTConformance(t *testing.T) {
	cases := loadConf(t)
	res := runAgreement(t, cases, true)
	ran, rejected := 0, 0
	for _, l := range res.Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
			continue
		}
		if _, ok := res.TranslateFails[l.Name]; ok {
			rejected++
		} else {
			ran++
		}
	}
	t.Logf("%d programs: %d agree when run, %d rejected by both; one build of all translations took %v", len(res.Lines), ran, rejected, res.BuildTime)
}

// loadConf reads the conformance suite's programs.
func loadConf(t *testing.T) []aotCase {
	root := moduleRoot(t)
	files, err := filepath.Glob(filepath.Join(root, conformanceDir, "*.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no conformance suite at %s", filepath.Join(root, conformanceDir))
	}
	var cases []aotCase
	for _, path := range files {
		c, err := conformance.ParseFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		prog, err := c.Program()
		if err != nil {
			t.Logf("%s: not assembled: %v", c.Name, err)
			continue
		}
		insns, err := runtime.DecodeInstructions(prog, binary.LittleEndian)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		cases = append(cases, aotCase{Name: c.Name, Insns: insns, Mem: c.Mem, Setup: "conformance"})
	}
	return cases
}
