package bridge

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// StructOps is a struct_ops map: a kernel structure of function pointers
// (tcp_congestion_ops, sched_ext_ops, ...) defined in the object's
// .struct_ops.link or .struct_ops section, whose function members are the
// object's struct_ops programs and whose data members (a name, flags) the
// source initialises. Attach registers it with its kernel subsystem
// through a link (a congestion control becomes selectable by its name);
// Close unregisters it.
//
// A map of .struct_ops, libbpf's form without a link, is loaded as one of
// .struct_ops.link (ParseObject): libbpf registers it by updating the
// map's element and unregisters it by deleting the element, so that it
// stays registered after the process ends unless detached, while skelgen
// registers it through a link, as cilium/ebpf loads struct_ops maps. The
// link ends the registration when it is closed or the process ends (pin
// it to keep it), and needs Linux 6.4 or later.
type StructOps struct {
	name  string
	m     *ebpf.Map
	links *Links
}

// NewStructOps returns the struct_ops map name of s. In process it has no
// kernel map, and Attach fails with ErrInProcess.
func NewStructOps(s *Set, name string) (*StructOps, error) {
	so := &StructOps{name: name, links: &s.Links}
	if s.Coll == nil {
		return so, nil
	}
	if so.m = s.Coll.Maps[name]; so.m == nil {
		return nil, fmt.Errorf("map %s: not loaded", name)
	}
	if so.m.Type() != ebpf.StructOpsMap {
		return nil, fmt.Errorf("map %s: %v, not a struct_ops map", name, so.m.Type())
	}
	return so, nil
}

// Raw returns the kernel map, or nil in process.
func (so *StructOps) Raw() *ebpf.Map { return so.m }

// StructOpsSpec is a struct_ops map before load: its structure V as the
// source initialised it. Data members (a congestion control's name, flags)
// may be changed with SetValue before Load; function members are filled
// with the object's programs at load, whatever V holds there.
type StructOpsSpec[V any] struct {
	MapSpec
}

// NewStructOpsSpec returns the struct_ops map name of spec, its value typed
// as V.
func NewStructOpsSpec[V any](spec *ebpf.CollectionSpec, name string) (*StructOpsSpec[V], error) {
	m, err := NewMapSpec(spec, name)
	if err != nil {
		return nil, err
	}
	if m.Spec.Type != ebpf.StructOpsMap {
		return nil, fmt.Errorf("map %s: %v, not a struct_ops map", name, m.Spec.Type)
	}
	if int(m.Spec.ValueSize) != sizeOf[V]() {
		return nil, fmt.Errorf("map %s: structure of %d bytes, Go type has %d", name, m.Spec.ValueSize, sizeOf[V]())
	}
	return &StructOpsSpec[V]{MapSpec: *m}, nil
}

// data is the structure's bytes in the spec: the one entry the object's
// section gives the map.
func (s *StructOpsSpec[V]) data() ([]byte, error) {
	if len(s.Spec.Contents) != 1 {
		return nil, fmt.Errorf("map %s: %d entries, want the structure alone", s.name, len(s.Spec.Contents))
	}
	b, ok := s.Spec.Contents[0].Value.([]byte)
	if !ok || len(b) != sizeOf[V]() {
		return nil, fmt.Errorf("map %s: the structure's bytes are not in the spec", s.name)
	}
	return b, nil
}

// Value returns the structure as it will be loaded.
func (s *StructOpsSpec[V]) Value() (V, error) {
	var v V
	b, err := s.data()
	if err == nil {
		copy(bytesOf(&v), b)
	}
	return v, err
}

// SetValue replaces the structure's data members with v's.
func (s *StructOpsSpec[V]) SetValue(v V) error {
	if _, err := s.data(); err != nil {
		return err
	}
	s.Spec.Contents[0].Value = append([]byte(nil), bytesOf(&v)...)
	return nil
}

func (so *StructOps) autoattach() (string, func() (link.Link, error)) {
	if so == nil {
		return "", nil
	}
	return so.name, so.Attach
}
