package bridge

import (
	"errors"
	"fmt"
	"iter"

	"github.com/cilium/ebpf"
)

// Map is a kernel map with keys of type K and values of type V.
type Map[K, V any] struct {
	m *ebpf.Map
}

// NewMap wraps m. It checks that the Go types have the map's key and value
// sizes, so a mismatch is found at load time and not as corrupted data.
func NewMap[K, V any](m *ebpf.Map) (*Map[K, V], error) {
	if err := checkSizes[K, V](m, 1); err != nil {
		return nil, err
	}
	return &Map[K, V]{m: m}, nil
}

func checkSizes[K, V any](m *ebpf.Map, valueUnits int) error {
	if m == nil {
		return errors.New("nil map")
	}
	if ks := sizeOf[K](); m.KeySize() != 0 && ks != int(m.KeySize()) {
		return fmt.Errorf("map %v: key size %d, Go key type has %d bytes", m, m.KeySize(), ks)
	}
	if vs := sizeOf[V](); m.ValueSize() != 0 && vs != int(m.ValueSize())*valueUnits {
		return fmt.Errorf("map %v: value size %d, Go value type has %d bytes", m, m.ValueSize(), vs)
	}
	return nil
}

// Raw returns the underlying cilium/ebpf map.
func (m *Map[K, V]) Raw() *ebpf.Map { return m.m }

// Lookup returns the value stored under key. A missing key is an error that
// satisfies errors.Is(err, ebpf.ErrKeyNotExist).
func (m *Map[K, V]) Lookup(key K) (V, error) {
	var v V
	err := m.m.Lookup(bytesOf(&key), bytesOf(&v))
	return v, err
}

// Update stores value under key with the given flags (ebpf.UpdateAny,
// UpdateNoExist, UpdateExist).
func (m *Map[K, V]) Update(key K, value V, flags ebpf.MapUpdateFlags) error {
	return m.m.Update(bytesOf(&key), bytesOf(&value), flags)
}

// Put stores value under key, creating or replacing it.
func (m *Map[K, V]) Put(key K, value V) error {
	return m.Update(key, value, ebpf.UpdateAny)
}

// Delete removes key.
func (m *Map[K, V]) Delete(key K) error {
	return m.m.Delete(bytesOf(&key))
}

// LookupAndDelete returns the value under key and removes it (queues, stacks
// and hash maps on kernels that support it).
func (m *Map[K, V]) LookupAndDelete(key K) (V, error) {
	var v V
	err := m.m.LookupAndDelete(bytesOf(&key), bytesOf(&v))
	return v, err
}

// All iterates over the map's entries. Iteration stops at the first error,
// which *errp receives when errp is not nil.
func (m *Map[K, V]) All(errp *error) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		it := m.m.Iterate()
		var kb, vb []byte
		for it.Next(&kb, &vb) {
			if !yield(fromBytes[K](kb), fromBytes[V](vb)) {
				return
			}
		}
		if errp != nil {
			*errp = it.Err()
		}
	}
}

// Keys returns every key of the map.
func (m *Map[K, V]) Keys() ([]K, error) {
	var keys []K
	var err error
	for k := range m.All(&err) {
		keys = append(keys, k)
	}
	return keys, err
}

// BatchLookup reads up to len(keys) entries starting at cursor (a zero
// cursor starts at the beginning) and returns how many it read. At the end of
// the map the error is ebpf.ErrKeyNotExist, with the last entries read.
func (m *Map[K, V]) BatchLookup(cursor *ebpf.MapBatchCursor, keys []K, values []V) (int, error) {
	if len(values) < len(keys) {
		return 0, errors.New("batch lookup: fewer values than keys")
	}
	return m.m.BatchLookup(cursor, keys, values[:len(keys)], nil)
}

// BatchUpdate stores keys[i] → values[i] in one system call.
func (m *Map[K, V]) BatchUpdate(keys []K, values []V, flags ebpf.MapUpdateFlags) (int, error) {
	if len(values) != len(keys) {
		return 0, errors.New("batch update: keys and values differ in length")
	}
	return m.m.BatchUpdate(keys, values, &ebpf.BatchOptions{ElemFlags: uint64(flags)})
}

// BatchDelete removes keys in one system call.
func (m *Map[K, V]) BatchDelete(keys []K) (int, error) {
	return m.m.BatchDelete(keys, nil)
}
