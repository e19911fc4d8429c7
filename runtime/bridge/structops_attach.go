//go:build !windows

package bridge

import (
	"fmt"

	"github.com/cilium/ebpf/link"
)

// Attach registers the structure with its subsystem through a struct_ops
// link, closed (unregistering it) by Close.
func (so *StructOps) Attach() (link.Link, error) {
	if so.m == nil {
		return nil, fmt.Errorf("struct_ops %s: attach: %w", so.name, ErrInProcess)
	}
	lk, err := link.AttachStructOps(link.StructOpsOptions{Map: so.m})
	if err != nil {
		err = explainPrivilege(explainAttach("struct_ops", err), "attaching struct_ops", capBPF)
		return nil, fmt.Errorf("struct_ops %s: attach: %w", so.name, err)
	}
	return so.links.add(lk, nil)
}
