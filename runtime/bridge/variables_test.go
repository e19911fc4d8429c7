package bridge

import (
	"testing"

	"github.com/cilium/ebpf"
)

// TestInProcessVariableSet: a value set before load (VarSpec.Set, which
// cilium/ebpf keeps in the variable) reaches the in-process section, as it
// reaches the kernel's.
func TestInProcessVariableSet(t *testing.T) {
	spec := userObject(nil)
	spec.Maps[".data"] = &ebpf.MapSpec{Name: ".data", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1,
		Contents: []ebpf.MapKV{{Key: uint32(0), Value: make([]byte, 16)}}}
	spec.Variables = map[string]*ebpf.VariableSpec{
		"a": {Name: "a", SectionName: ".data", Offset: 0, Value: make([]byte, 8)},
		"b": {Name: "b", SectionName: ".data", Offset: 8, Value: make([]byte, 8)},
	}
	vs, err := NewVarSpec[uint64](spec.Variables["b"])
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.Set(42); err != nil {
		t.Fatal(err)
	}
	s := loadObject(t, spec, nil, true)
	for name, want := range map[string]uint64{"a": 0, "b": 42} {
		v, err := NewVar[uint64](s, name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := v.Get(); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", name, got, err, want)
		}
	}
	if c := spec.Maps[".data"].Contents[0].Value.([]byte); c[8] != 0 {
		t.Error("the load changed the spec's section contents")
	}
}
