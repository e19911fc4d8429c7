package runtime

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

type vector struct {
	sections map[string]string
}

func parseVector(data string) vector {
	v := vector{sections: map[string]string{}}
	cur := ""
	for _, l := range strings.Split(data, "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if name, ok := strings.CutPrefix(l, "-- "); ok {
			cur = strings.TrimSpace(name)
			v.sections[cur] += ""
			continue
		}
		if cur != "" {
			v.sections[cur] += l + "\n"
		}
	}
	return v
}

// program returns the vector's instructions: from "-- raw" (64-bit words
// or bytes) when present, else assembled from "-- asm".
func (v vector) program() ([]Instruction, error) {
	raw, ok := v.sections["raw"]
	if !ok {
		return assemble(v.sections["asm"])
	}
	var b []byte
	for _, f := range strings.Fields(raw) {
		if strings.HasPrefix(f, "0x") {
			w, err := strconv.ParseUint(f[2:], 16, 64)
			if err != nil {
				return nil, err
			}
			b = binary.LittleEndian.AppendUint64(b, w)
			continue
		}
		x, err := hex.DecodeString(f)
		if err != nil {
			return nil, err
		}
		b = append(b, x...)
	}
	return DecodeInstructions(b, binary.LittleEndian)
}

func (v vector) mem() []byte {
	b, _ := hex.DecodeString(strings.Join(strings.Fields(v.sections["mem"]), ""))
	return b
}

// conformanceHelpers registers helper 5 as the suite's "unwind", which
// returns its first argument.
func conformanceHelpers() *HelperSet {
	h := Builtins()
	h.Register(5, "unwind", func(_ *Machine, r1, _, _, _, _ uint64) (uint64, error) { return r1, nil })
	return h
}

// runVector runs a vector with fused instructions and without; the two
// must agree.
func runVector(v vector) (uint64, error) {
	insns, err := v.program()
	if err != nil {
		return 0, err
	}
	var r0 [2]uint64
	var errs [2]error
	for i, noFusion := range []bool{false, true} {
		p, err := Load(&ProgramSpec{Instructions: insns}, &Options{Helpers: conformanceHelpers(), noFusion: noFusion})
		if err != nil {
			return 0, err
		}
		r0[i], errs[i] = p.Run(v.mem())
	}
	if r0[0] != r0[1] || (errs[0] == nil) != (errs[1] == nil) {
		return 0, fmt.Errorf("fused run (%#x, %v) differs from plain run (%#x, %v)", r0[0], errs[0], r0[1], errs[1])
	}
	return r0[0], errs[0]
}

func TestConformance(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Conformance(t), "tests", "*.data"))
	if len(files) == 0 {
		t.Fatal("no conformance vectors in tests/")
	}
	known := map[string]bool{"asm": true, "raw": true, "mem": true, "result": true, "error": true, "c": true, "no register offset": true}
	passed := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".data"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v := parseVector(string(data))
			for s := range v.sections {
				if !known[s] {
					t.Skipf("unknown section %q", s)
				}
			}
			r0, err := runVector(v)
			if want, ok := v.sections["error"]; ok {
				if err == nil {
					t.Fatalf("want error %q, got r0=%#x", strings.TrimSpace(want), r0)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v.sections["result"]), "0x"), 16, 64)
			if err != nil {
				t.Fatalf("bad result section: %v", err)
			}
			if r0 != want {
				t.Fatalf("r0 = %#x, want %#x", r0, want)
			}
			passed++
		})
	}
	t.Logf("%d of %d conformance vectors passed", passed, len(files))
}

// TestConformanceNegative checks that every program the suite marks as
// invalid is rejected: by the test assembler, by Load, at run time, or by
// a result that differs from the stated one.
func TestConformanceNegative(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Conformance(t), "negative", "*.data"))
	if len(files) == 0 {
		t.Fatal("no conformance vectors in negative/")
	}
	known := map[string]bool{"asm": true, "raw": true, "mem": true, "result": true, "error": true}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".data"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v := parseVector(string(data))
			for s := range v.sections {
				if !known[s] {
					return // an unknown directive is itself the rejection
				}
			}
			if len(v.sections) == 0 || strings.TrimSpace(v.sections["asm"]+v.sections["raw"]) == "" {
				return // nothing to run: rejected
			}
			r0, err := runVector(v)
			if err != nil {
				var ve *ValidationError
				if strings.HasPrefix(filepath.Base(f), "unused-") && !errors.As(err, &ve) {
					t.Fatalf("want a validation error, got %v", err)
				}
				return
			}
			if res, ok := v.sections["result"]; ok {
				want, perr := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(res), "0x"), 16, 64)
				if perr != nil || want != r0 {
					return
				}
			}
			t.Fatalf("accepted; r0=%#x", r0)
		})
	}
}
