package conformance

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/runtime"
)

// TestDisassemblyRoundTrip checks that the runtime's disassembler and
// package asm speak the same dialect: every program of the suite (tests/
// and negative/, "-- asm" and "-- raw") that package asm assembles, or
// whose raw slots the runtime validates, is decoded, printed with
// runtime.Disassemble, assembled again and must give the same bytes.
func TestDisassemblyRoundTrip(t *testing.T) {
	dir := suiteDir(t)
	files := append(dataFiles(t, filepath.Join(dir, "tests")), dataFiles(t, filepath.Join(dir, "negative"))...)
	n := 0
	for _, f := range files {
		c, err := ParseFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var code []byte
		switch {
		case c.HasRaw:
			code = c.Raw
			insns, err := runtime.DecodeInstructions(code, binary.LittleEndian)
			if err != nil {
				continue
			}
			if _, err := runtime.Load(&runtime.ProgramSpec{Instructions: insns}, nil); err != nil {
				continue // a program the runtime rejects need not print as assembly
			}
		case c.HasAsm:
			if code, err = asm.Assemble(c.Asm); err != nil {
				continue // a negative test of the assembler
			}
		default:
			continue
		}
		insns, err := runtime.DecodeInstructions(code, binary.LittleEndian)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		text := runtime.Disassemble(insns)
		again, err := asm.Assemble(text)
		if err != nil {
			t.Errorf("%s: the disassembly does not assemble: %v\n%s", c.Name, err, text)
			continue
		}
		if !bytes.Equal(again, code) {
			t.Errorf("%s: the disassembly assembles to different bytes\n%s", c.Name, text)
			continue
		}
		n++
	}
	if n == 0 {
		t.Fatal("no program round-tripped")
	}
	t.Logf("%d programs round-tripped through runtime.Disassemble and asm", n)
}
