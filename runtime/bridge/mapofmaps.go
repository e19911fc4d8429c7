package bridge

import "github.com/cilium/ebpf"

// MapOfMaps is an array or hash of maps: its values are inner kernel maps.
// It exists only in the kernel.
type MapOfMaps[K any] struct {
	_ incomparable
	m *ebpf.Map
	h mapHandle
}

// NewMapOfMaps returns the map name of s, checking the key size. In
// process it returns a map whose operations fail with ErrInProcess.
func NewMapOfMaps[K any](s *Set, name string) (*MapOfMaps[K], error) {
	if s.Coll == nil {
		return &MapOfMaps[K]{}, nil
	}
	h, err := s.mapHandle(name)
	if err != nil {
		return nil, err
	}
	if err := h.checkSizes(sizeOf[K](), -1); err != nil {
		return nil, err
	}
	return &MapOfMaps[K]{m: h.k, h: h}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (m *MapOfMaps[K]) Raw() *ebpf.Map { return m.m }

// Lookup returns the inner map stored under key; the caller closes it.
func (m *MapOfMaps[K]) Lookup(key K) (*ebpf.Map, error) {
	if m.m == nil {
		return nil, ErrInProcess
	}
	var inner *ebpf.Map
	err := m.h.call(func() error { return m.m.Lookup(bytesOf(&key), &inner) })
	return inner, err
}

// Update stores inner under key.
func (m *MapOfMaps[K]) Update(key K, inner *ebpf.Map, flags ebpf.MapUpdateFlags) error {
	if m.m == nil {
		return ErrInProcess
	}
	return m.h.call(func() error { return m.m.Update(bytesOf(&key), inner, flags) })
}

// Delete removes key.
func (m *MapOfMaps[K]) Delete(key K) error {
	if m.m == nil {
		return ErrInProcess
	}
	return m.h.delete(bytesOf(&key))
}
