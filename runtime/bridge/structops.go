package bridge

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// StructOps is a struct_ops map: a kernel structure of function pointers
// (tcp_congestion_ops, sched_ext_ops, ...) defined in the object's
// .struct_ops.link section, whose function members are the object's
// struct_ops programs and whose data members (a name, flags) the source
// initialises. Attach registers it with its kernel subsystem through a
// link (a congestion control becomes selectable by its name); Close
// unregisters it.
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
