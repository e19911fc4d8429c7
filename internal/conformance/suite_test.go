package conformance

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/internal/testenv"
)

// suiteDir returns the bpf_conformance suite beside the module root.
func suiteDir(t *testing.T) string {
	t.Helper()
	return testenv.Conformance(t)
}

func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.data"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .data files in %s (%v)", dir, err)
	}
	return files
}

// TestSuite runs every file of tests/ at ISA v4: all must pass, none may be
// skipped.
func TestSuite(t *testing.T) {
	files := dataFiles(t, filepath.Join(suiteDir(t), "tests"))
	var sum Summary
	for _, f := range files {
		name, o := RunFile(f, Options{})
		sum.Add(o)
		if o.Status != Pass {
			t.Errorf("%s %s: %s", o.Status, name, o.Reason)
		}
	}
	t.Logf("tests/: %d files: %s", len(files), sum)
}

// TestNegative runs every file of negative/: all must be rejected.
func TestNegative(t *testing.T) {
	files := dataFiles(t, filepath.Join(suiteDir(t), "negative"))
	var sum Summary
	reasons := map[string]int{}
	for _, f := range files {
		name, o := RunFile(f, Options{Negative: true})
		sum.Add(o)
		if o.Status != Rejected {
			t.Errorf("%s %s: %s", o.Status, name, o.Reason)
			continue
		}
		reasons[strings.SplitN(o.Reason, ":", 2)[0]]++
	}
	t.Logf("negative/: %d files: %s; rejections by first word of the reason: %v", len(files), sum, reasons)
}

// TestAsmMatchesRaw checks the assembler against every file that states a
// program both ways, and that every asm section of tests/ assembles.
func TestAsmMatchesRaw(t *testing.T) {
	suite := suiteDir(t)
	compared, assembled := 0, 0
	for _, dir := range []string{"tests", "negative"} {
		for _, f := range dataFiles(t, filepath.Join(suite, dir)) {
			c, err := ParseFile(f)
			if err != nil {
				if dir == "tests" {
					t.Errorf("%v", err)
				}
				continue
			}
			if !c.HasAsm {
				continue
			}
			b, err := asm.Assemble(c.Asm)
			if err != nil {
				if dir == "tests" {
					t.Errorf("%s: %v", f, err)
				}
				continue
			}
			if dir == "tests" {
				assembled++
			}
			if c.HasRaw {
				compared++
				if !bytes.Equal(b, c.Raw) {
					t.Errorf("%s: asm gives\n% x\nraw says\n% x", f, b, c.Raw)
				}
			}
		}
	}
	if compared == 0 {
		t.Error("no file has both asm and raw sections: nothing compared")
	}
	t.Logf("assembled %d asm sections of tests/; %d files with both asm and raw compared", assembled, compared)
}
