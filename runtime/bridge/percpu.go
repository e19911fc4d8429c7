package bridge

import (
	"fmt"
	"iter"

	"github.com/cilium/ebpf"
)

// PerCPUMap is a per-CPU kernel map: each key holds one V per possible CPU.
type PerCPUMap[K, V any] struct {
	m *ebpf.Map
}

// NewPerCPUMap wraps m, checking the key and value sizes.
func NewPerCPUMap[K, V any](m *ebpf.Map) (*PerCPUMap[K, V], error) {
	if err := checkSizes[K, V](m, 1); err != nil {
		return nil, err
	}
	return &PerCPUMap[K, V]{m: m}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (m *PerCPUMap[K, V]) Raw() *ebpf.Map { return m.m }

// stride is the kernel's per-CPU value stride: the value size rounded up to 8.
func (m *PerCPUMap[K, V]) stride() int { return (sizeOf[V]() + 7) &^ 7 }

func (m *PerCPUMap[K, V]) split(b []byte) ([]V, error) {
	stride := m.stride()
	if stride == 0 || len(b)%stride != 0 {
		return nil, fmt.Errorf("map %v: per-CPU value of %d bytes is not a multiple of %d", m.m, len(b), stride)
	}
	out := make([]V, len(b)/stride)
	for i := range out {
		out[i] = fromBytes[V](b[i*stride:])
	}
	return out, nil
}

// Lookup returns the values of key, one per possible CPU.
func (m *PerCPUMap[K, V]) Lookup(key K) ([]V, error) {
	b, err := m.m.LookupBytes(bytesOf(&key))
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("lookup: %w", ebpf.ErrKeyNotExist)
	}
	return m.split(b)
}

// Update stores values (one per possible CPU) under key.
func (m *PerCPUMap[K, V]) Update(key K, values []V, flags ebpf.MapUpdateFlags) error {
	per := make([][]byte, len(values))
	for i := range values {
		per[i] = bytesOf(&values[i])
	}
	return m.m.Update(bytesOf(&key), per, flags)
}

// Delete removes key.
func (m *PerCPUMap[K, V]) Delete(key K) error {
	return m.m.Delete(bytesOf(&key))
}

// All iterates over the map's entries; see Map.All.
func (m *PerCPUMap[K, V]) All(errp *error) iter.Seq2[K, []V] {
	return func(yield func(K, []V) bool) {
		var err error
		defer func() {
			if errp != nil {
				*errp = err
			}
		}()
		var kb []byte
		var next []byte
		for {
			var prev any
			if kb != nil {
				prev = kb
			}
			next, err = m.m.NextKeyBytes(prev)
			if err != nil || next == nil {
				return
			}
			kb = next
			var vs []V
			vs, err = m.Lookup(fromBytes[K](kb))
			if err != nil {
				return
			}
			if !yield(fromBytes[K](kb), vs) {
				return
			}
		}
	}
}

// MapOfMaps is an array or hash of maps: its values are inner kernel maps.
type MapOfMaps[K any] struct {
	m *ebpf.Map
}

// NewMapOfMaps wraps m, checking the key size.
func NewMapOfMaps[K any](m *ebpf.Map) (*MapOfMaps[K], error) {
	if err := checkSizes[K, uint32](m, 1); err != nil {
		return nil, err
	}
	return &MapOfMaps[K]{m: m}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (m *MapOfMaps[K]) Raw() *ebpf.Map { return m.m }

// Lookup returns the inner map stored under key; the caller closes it.
func (m *MapOfMaps[K]) Lookup(key K) (*ebpf.Map, error) {
	var inner *ebpf.Map
	err := m.m.Lookup(bytesOf(&key), &inner)
	return inner, err
}

// Update stores inner under key.
func (m *MapOfMaps[K]) Update(key K, inner *ebpf.Map, flags ebpf.MapUpdateFlags) error {
	return m.m.Update(bytesOf(&key), inner, flags)
}

// Delete removes key.
func (m *MapOfMaps[K]) Delete(key K) error {
	return m.m.Delete(bytesOf(&key))
}
