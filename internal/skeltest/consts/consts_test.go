package consts

import (
	"go/parser"
	"go/token"
	"math"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestConstantValues compares the Go constants with what the object says
// of the same names, where it says it, and with the values C gives the
// source's expressions.
func TestConstantValues(t *testing.T) {
	spec, err := LoadConstsSpec()
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Maps.Slots.Spec.MaxEntries; got != uint32(ConstsMaxSlots) {
		t.Errorf("max_entries(slots) = MAX_SLOTS = %d in the object, ConstsMaxSlots = %d", got, ConstsMaxSlots)
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"SLOT_MASK", int64(ConstsSlotMask), 26},
		{"NEG", int64(ConstsNeg), -5},
		{"SHIFTED", int64(ConstsShifted), 1<<12 | 3},
		{"TRUTH", int64(ConstsTruth), 1},
		{"ANON_ONE", int64(ConstsAnonOne), 1},
		{"ANON_TWO", int64(ConstsAnonTwo), 2},
		{"ANON_TEN", int64(ConstsAnonTen), 10},
		{"ANON_ELEVEN", int64(ConstsAnonEleven), 11},
		{"SLOT_SIZE", int64(ConstsSlotSize), 8},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if ConstsBig != uint64(math.MaxUint64) {
		t.Errorf("BIG = %d", uint64(ConstsBig))
	}
	if ConstsToolName != "consts-tool" {
		t.Errorf("TOOL_NAME = %q", ConstsToolName)
	}
}

// TestNoConstant: what is not a constant of the source gets no Go constant.
func TestNoConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "consts_bpfel.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ConstsNotAConstant", "ConstsAType", "ConstsCallsAMacro", "ConstsConditional", "ConstsGone"} {
		if f.Scope.Lookup(name) != nil {
			t.Errorf("%s is declared", name)
		}
	}
	if f.Scope.Lookup("ConstsMaxSlots") == nil {
		t.Error("ConstsMaxSlots is not declared in consts_bpfel.go")
	}
}

func TestEnumString(t *testing.T) {
	for v, want := range map[ConstsColor]string{
		ConstsColorRed:       "COLOR_RED",
		ConstsColorBlue:      "COLOR_BLUE",
		ConstsColorAlsoGreen: "COLOR_GREEN", // the first name of 4
		ConstsColor(7):       "ConstsColor(7)",
	} {
		if got := v.String(); got != want {
			t.Errorf("ConstsColor(%d).String() = %q, want %q", uint32(v), got, want)
		}
	}
}

// TestConstantsInKernel runs the program, which uses the constants, and
// reads its results through them.
func TestConstantsInKernel(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadConsts(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	const size = 64
	if _, err := objs.Count.Run(&ebpf.RunOptions{Data: make([]byte, size)}); err != nil {
		t.Fatal(err)
	}
	s, err := objs.Slots.Lookup(uint32(size & ConstsSlotMask))
	if err != nil {
		t.Fatal(err)
	}
	if s.Hits != uint64(ConstsAnonTen) {
		t.Errorf("slot %d: %d hits, want ANON_TEN (%d)", size&ConstsSlotMask, s.Hits, ConstsAnonTen)
	}
	c, err := objs.Variables.LastColor.Get()
	if err != nil {
		t.Fatal(err)
	}
	if ConstsColor(c) != ConstsColorBlue {
		t.Errorf("last_color = %v, want %v", ConstsColor(c), ConstsColorBlue)
	}
}
