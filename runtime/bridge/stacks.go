package bridge

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
)

// StackTraceMap is a BPF_MAP_TYPE_STACK_TRACE: stack ids (from
// bpf_get_stackid) to arrays of instruction addresses. Its depth is the
// value size the map was loaded with, over 8.
type StackTraceMap struct {
	m     *ebpf.Map
	h     mapHandle
	name  string
	depth int
}

// NewStackTraceMap returns the stack trace map name of s. In process it
// returns a map whose Lookup fails with ErrInProcess.
func NewStackTraceMap(s *Set, name string) (*StackTraceMap, error) {
	if s.Coll == nil {
		return &StackTraceMap{name: name}, nil
	}
	h, err := s.mapHandle(name)
	if err != nil {
		return nil, err
	}
	if h.k == nil {
		return nil, fmt.Errorf("map %s: not a kernel map", name)
	}
	if err := h.checkSizes(4, -1); err != nil {
		return nil, err
	}
	vs := h.valueSize()
	if vs == 0 || vs%8 != 0 {
		return nil, fmt.Errorf("map %s: value size %d is not a whole number of 8-byte frames", name, vs)
	}
	return &StackTraceMap{m: h.k, h: h, name: name, depth: vs / 8}, nil
}

// Raw returns the underlying cilium/ebpf map, or nil in process.
func (m *StackTraceMap) Raw() *ebpf.Map { return m.m }

// Depth returns the number of frames a stack holds.
func (m *StackTraceMap) Depth() int { return m.depth }

// Lookup returns the addresses of stack id, innermost first, without the
// zero entries past its end.
func (m *StackTraceMap) Lookup(id uint32) ([]uint64, error) {
	if m.m == nil {
		return nil, fmt.Errorf("map %s: %w", m.name, ErrInProcess)
	}
	buf := make([]byte, m.depth*8)
	if err := m.h.call(func() error { return m.m.Lookup(&id, buf) }); err != nil {
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, fmt.Errorf("map %s: stack %d: %w", m.name, id, err)
		}
		return nil, err
	}
	addrs := make([]uint64, 0, m.depth)
	for i := 0; i < m.depth; i++ {
		a := binary.NativeEndian.Uint64(buf[i*8:])
		if a == 0 {
			break
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// Delete removes stack id.
func (m *StackTraceMap) Delete(id uint32) error {
	if m.m == nil {
		return fmt.Errorf("map %s: %w", m.name, ErrInProcess)
	}
	return m.h.delete(binary.NativeEndian.AppendUint32(nil, id))
}
