package bridge

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// MapSpec is one map of an object before load. Tools size maps from their
// options (a histogram with as many slots as asked for, a stack map as
// deep as -stack-depth): set the size here, then Load.
type MapSpec struct {
	// Spec is cilium/ebpf's view of the map; the setters change it.
	Spec *ebpf.MapSpec
	name string
}

// RawMapSpec is a MapSpec whose values the skeleton does not type (stack
// traces, maps without BTF): their value size may be set too.
type RawMapSpec struct {
	MapSpec
}

// NewMapSpec returns the map name of spec.
func NewMapSpec(spec *ebpf.CollectionSpec, name string) (*MapSpec, error) {
	ms := spec.Maps[name]
	if ms == nil {
		return nil, fmt.Errorf("map %s: not in the object", name)
	}
	return &MapSpec{Spec: ms, name: name}, nil
}

// NewRawMapSpec returns the map name of spec, whose value size may be set.
func NewRawMapSpec(spec *ebpf.CollectionSpec, name string) (*RawMapSpec, error) {
	m, err := NewMapSpec(spec, name)
	if err != nil {
		return nil, err
	}
	return &RawMapSpec{MapSpec: *m}, nil
}

// Name returns the map's C name.
func (m *MapSpec) Name() string { return m.name }

// MaxEntries returns the map's max_entries as it will be loaded.
func (m *MapSpec) MaxEntries() uint32 { return m.Spec.MaxEntries }

// SetMaxEntries sets max_entries (libbpf's bpf_map__set_max_entries).
func (m *MapSpec) SetMaxEntries(n uint32) { m.Spec.MaxEntries = n }

// ValueSize returns the map's value size as it will be loaded.
func (m *MapSpec) ValueSize() uint32 { return m.Spec.ValueSize }

// InnerMap returns the spec of the inner map of a map-in-map, or nil.
// Every inner map stored in it must match what is set here.
func (m *MapSpec) InnerMap() *RawMapSpec {
	if m.Spec.InnerMap == nil {
		return nil
	}
	return &RawMapSpec{MapSpec: MapSpec{Spec: m.Spec.InnerMap, name: m.name + " (inner)"}}
}

// SetValueSize sets the value size (libbpf's bpf_map__set_value_size): for
// a stack trace map, 8 bytes per frame kept. It drops the map's BTF value
// type, which no longer describes the value.
func (m *RawMapSpec) SetValueSize(n uint32) {
	if n != m.Spec.ValueSize {
		m.Spec.Value = nil
	}
	m.Spec.ValueSize = n
}

// checkSized rejects maps the kernel would refuse for lack of a size, with
// a message saying which setter fixes it, rather than a bare EINVAL.
func checkSized(spec *ebpf.CollectionSpec) error {
	for _, name := range sortedKeys(spec.Maps) {
		if err := checkSizedMap(name, spec.Maps[name]); err != nil {
			return err
		}
		if inner := spec.Maps[name].InnerMap; inner != nil {
			if err := checkSizedMap(name+" (inner map)", inner); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkSizedMap(name string, ms *ebpf.MapSpec) error {
	switch ms.Type {
	case ebpf.Hash, ebpf.Array, ebpf.LRUHash, ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash, ebpf.LPMTrie, ebpf.StackTrace, ebpf.RingBuf:
		if ms.MaxEntries == 0 {
			return fmt.Errorf("map %s: max_entries is 0: size it before load (Spec.Maps.<Map>.SetMaxEntries)", name)
		}
	}
	if ms.Type == ebpf.StackTrace && (ms.ValueSize == 0 || ms.ValueSize%8 != 0) {
		return fmt.Errorf("map %s: value size %d is not a whole number of 8-byte frames: set it before load (Spec.Maps.<Map>.SetValueSize)", name, ms.ValueSize)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
