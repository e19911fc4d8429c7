package bridge

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

func TestCheckSized(t *testing.T) {
	inner := &ebpf.MapSpec{Name: "inner", Type: ebpf.Array, KeySize: 4, ValueSize: 8}
	spec := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{
		"stacks": {Name: "stacks", Type: ebpf.StackTrace, KeySize: 4},
		"outer":  {Name: "outer", Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: 1, InnerMap: inner},
		"perf":   {Name: "perf", Type: ebpf.PerfEventArray},
	}}
	steps := []struct {
		fix  func()
		want string
	}{
		{func() {}, "map outer (inner map): max_entries is 0"},
		{func() { (&MapSpec{Spec: spec.Maps["outer"]}).InnerMap().SetMaxEntries(4) }, "map stacks: max_entries is 0"},
		{func() { (&MapSpec{Spec: spec.Maps["stacks"]}).SetMaxEntries(16) }, "map stacks: value size 0"},
		{func() { (&RawMapSpec{MapSpec{Spec: spec.Maps["stacks"]}}).SetValueSize(12) }, "map stacks: value size 12"},
		{func() { (&RawMapSpec{MapSpec{Spec: spec.Maps["stacks"]}}).SetValueSize(64) }, ""},
	}
	for i, s := range steps {
		s.fix()
		err := checkSized(spec)
		if s.want == "" {
			if err != nil {
				t.Errorf("step %d: %v", i, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), s.want) {
			t.Errorf("step %d: %v, want %q", i, err, s.want)
		}
	}
	if inner.MaxEntries != 4 {
		t.Error("InnerMap().SetMaxEntries did not size the inner map")
	}
}

func TestWithDisabled(t *testing.T) {
	spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{
		"k": {Name: "k", SectionName: "xdp"},
		"u": {Name: "u", SectionName: "ubpf/u"},
		"v": {Name: "v", SectionName: "ubpf/v"},
	}}
	k, _ := NewProgramSpec(spec, "k")
	u, _ := NewProgramSpec(spec, "u")
	if _, err := NewProgramSpec(spec, "nope"); err == nil {
		t.Error("a program not in the object")
	}
	k.SetAutoload(false)
	u.SetAutoload(false)
	o := withDisabled(LoadOptions{Disabled: []string{"v"}}, []*ProgramSpec{k, u, nil})
	s := &Set{Spec: spec}
	kspec := spec.Copy()
	if err := s.applyDisabled(kspec, &o); err != nil {
		t.Fatal(err)
	}
	if _, ok := kspec.Programs["k"]; ok || !s.Disabled("k") || !s.Disabled("u") || !s.Disabled("v") {
		t.Errorf("disabled: k %v u %v v %v, k in kernel spec %v", s.Disabled("k"), s.Disabled("u"), s.Disabled("v"), ok)
	}
	if len(o.Programs) != 0 {
		t.Errorf("user programs to load: %v, want none", o.Programs)
	}
	if err := (&Set{Spec: spec}).applyDisabled(nil, &LoadOptions{Disabled: []string{"x"}}); err == nil {
		t.Error("disabling a program not in the object")
	}
}
