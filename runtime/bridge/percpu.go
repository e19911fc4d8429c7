package bridge

import (
	"fmt"
	"iter"

	"github.com/cilium/ebpf"
)

// PerCPUMap is a per-CPU map: each key holds one V per possible CPU. In
// process, the runtime has one CPU, so each key holds one V.
type PerCPUMap[K, V any] struct {
	_ incomparable
	h mapHandle
}

// NewPerCPUMap returns the map name of s, checking the key and value sizes.
func NewPerCPUMap[K, V any](s *Set, name string) (*PerCPUMap[K, V], error) {
	m := new(PerCPUMap[K, V])
	if err := typedHandle[K, V](s, name, &m.h); err != nil {
		return nil, err
	}
	return m, nil
}

// Raw returns the kernel map, or nil when the map lives in the process.
func (m *PerCPUMap[K, V]) Raw() *ebpf.Map { return m.h.k }

// Lookup returns the values of key, one per possible CPU.
func (m *PerCPUMap[K, V]) Lookup(key K) ([]V, error) {
	if m.h.k == nil {
		var v V
		if err := m.h.lookup(bytesOf(&key), bytesOf(&v)); err != nil {
			return nil, err
		}
		return []V{v}, nil
	}
	var b []byte
	err := m.h.call(func() (err error) {
		b, err = m.h.k.LookupBytes(bytesOf(&key))
		return err
	})
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("lookup: %w", ebpf.ErrKeyNotExist)
	}
	// The kernel's per-CPU stride is the value size rounded up to 8.
	stride := (sizeOf[V]() + 7) &^ 7
	if stride == 0 || len(b)%stride != 0 {
		return nil, fmt.Errorf("map %s: per-CPU value of %d bytes is not a multiple of %d", m.h.name, len(b), stride)
	}
	out := make([]V, len(b)/stride)
	for i := range out {
		out[i] = fromBytes[V](b[i*stride:])
	}
	return out, nil
}

// Update stores values (one per possible CPU) under key.
func (m *PerCPUMap[K, V]) Update(key K, values []V, flags ebpf.MapUpdateFlags) error {
	if m.h.k == nil {
		if len(values) != 1 {
			return fmt.Errorf("map %s: %d per-CPU values for the runtime's one CPU", m.h.name, len(values))
		}
		return m.h.update(bytesOf(&key), bytesOf(&values[0]), flags)
	}
	per := make([][]byte, len(values))
	for i := range values {
		per[i] = bytesOf(&values[i])
	}
	return m.h.call(func() error { return m.h.k.Update(bytesOf(&key), per, flags) })
}

// Delete removes key.
func (m *PerCPUMap[K, V]) Delete(key K) error {
	return m.h.delete(bytesOf(&key))
}

// All iterates over the map's entries; see Map.All.
func (m *PerCPUMap[K, V]) All(errp *error) iter.Seq2[K, []V] {
	return func(yield func(K, []V) bool) {
		var err error
		if m.h.k != nil {
			var prev any
			for {
				var kb []byte
				if err = m.h.call(func() (err error) { kb, err = m.h.k.NextKeyBytes(prev); return err }); err != nil || kb == nil {
					break
				}
				var vs []V
				if vs, err = m.Lookup(fromBytes[K](kb)); err != nil || !yield(fromBytes[K](kb), vs) {
					break
				}
				prev = kb
			}
		} else {
			var v V
			err = m.h.userEntries(bytesOf(&v), func(kb []byte) bool { return yield(fromBytes[K](kb), []V{v}) })
		}
		if errp != nil {
			*errp = err
		}
	}
}
