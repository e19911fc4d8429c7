package bridge

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skelgen/skelgen/runtime"
)

// TestTranslationSpecTakesNoMapMemory: a program whose maps pass the
// runtime's default map memory (a preallocated hash map and an array of
// 2^31 entries) is translated, since the limit is the user's to raise at
// load; the load then fails naming the option that raises it, and a hash
// map of that size loads with the limit raised (its entries come as it
// grows).
func TestTranslationSpecTakesNoMapMemory(t *testing.T) {
	lookup := func(m string) asm.Instructions {
		return asm.Instructions{
			asm.StoreImm(asm.R10, -4, 1, asm.Word),
			asm.LoadMapPtr(asm.R1, 0).WithReference(m),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		}
	}
	spec := userObject(map[string]asm.Instructions{"hash": lookup("big_hash"), "array": lookup("big_array")})
	spec.Maps["big_hash"] = &ebpf.MapSpec{Name: "big_hash", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1 << 31}
	spec.Maps["big_array"] = &ebpf.MapSpec{Name: "big_array", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1 << 31}
	for _, name := range []string{"hash", "array"} {
		rs, err := TranslationSpec(spec, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := rs.Maps[0].Spec().MaxEntries; got != 1<<31 {
			t.Errorf("%s: the translation sees %d entries, want 2^31", name, got)
		}
	}
	_, err := Load(spec, nil, &LoadOptions{InProcess: true, Output: io.Discard})
	if !errors.Is(err, runtime.ErrNoMemory) || !strings.Contains(err.Error(), "LoadOptions.MapMemory") {
		t.Errorf("load with the default limit: %v, want ErrNoMemory naming LoadOptions.MapMemory", err)
	}
	s, err := Load(spec, nil, &LoadOptions{InProcess: true, Output: io.Discard, MapMemory: 1 << 40, Programs: []string{"hash"}})
	if err != nil {
		t.Fatalf("load of the hash map with the limit raised: %v", err)
	}
	s.Close()
}
