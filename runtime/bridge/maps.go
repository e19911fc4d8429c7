package bridge

import (
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

// ErrClosed is returned by the operations of a loaded object after Close.
var ErrClosed = errors.New("object is closed")

// ErrInProcess is returned by operations that need the kernel when an object
// was loaded to run in process.
var ErrInProcess = errors.New("not available: the object runs in process, without the kernel")

// mapHandle is a map of a loaded object: a kernel map, or a user-space map
// of the runtime when the map lives in the Go process. Every call goes
// between begin and end: it fails with ErrClosed once the set is closing,
// and Close waits for it before it closes the map. Calls on a user-space
// map also take its lock (runtime.SharedMap), so they are safe next to
// runs of user programs and other goroutines.
type mapHandle struct {
	name string
	k    *ebpf.Map
	u    runtime.Map
	l    sync.Locker // u's lock, when it has one
	set  *Set
}

func (s *Set) mapHandle(name string) (mapHandle, error) {
	h := mapHandle{name: name, set: s}
	if s.Coll != nil {
		h.k = s.Coll.Maps[name]
	}
	if h.k == nil && s.User != nil {
		h = s.userHandle(name)
	}
	if h.k == nil && h.u == nil {
		return h, fmt.Errorf("map %s: not loaded", name)
	}
	return h, nil
}

// userHandle is the user-space map name of s (u is nil when there is none).
func (s *Set) userHandle(name string) mapHandle {
	h := mapHandle{name: name, u: s.User.maps[name], set: s}
	if l, ok := h.u.(runtime.SharedMap); ok {
		h.l = l
	}
	return h
}

// begin starts a call on the map: it counts the call in the set's lifetime
// and takes a user-space map's lock. end ends it.
func (h *mapHandle) begin() error {
	if err := h.set.life.enter(); err != nil {
		return fmt.Errorf("map %s: %w", h.name, err)
	}
	if h.l != nil {
		h.l.Lock()
	}
	return nil
}

func (h *mapHandle) end() {
	if h.l != nil {
		h.l.Unlock()
	}
	h.set.life.leave()
}

// call runs f as one call on the map (see begin).
func (h *mapHandle) call(f func() error) error {
	if err := h.begin(); err != nil {
		return err
	}
	defer h.end()
	return f()
}

func (h *mapHandle) keySize() int {
	if h.k != nil {
		return int(h.k.KeySize())
	}
	return int(h.u.Spec().KeySize)
}

func (h *mapHandle) valueSize() int {
	if h.k != nil {
		return int(h.k.ValueSize())
	}
	return int(h.u.Spec().ValueSize)
}

func (h *mapHandle) checkSizes(ks, vs int) error {
	if k := h.keySize(); k != 0 && k != ks {
		return fmt.Errorf("map %s: key size %d, Go key type has %d bytes", h.name, k, ks)
	}
	if v := h.valueSize(); v != 0 && vs >= 0 && v != vs {
		return fmt.Errorf("map %s: value size %d, Go value type has %d bytes", h.name, v, vs)
	}
	return nil
}

// userErr maps the runtime's map errors to cilium/ebpf's, so that callers
// test one set of errors whichever side holds the map.
func userErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runtime.ErrKeyNotExist):
		return fmt.Errorf("%w", ebpf.ErrKeyNotExist)
	case errors.Is(err, runtime.ErrKeyExist):
		return fmt.Errorf("%w", ebpf.ErrKeyExist)
	}
	return err
}

func (h *mapHandle) lookup(key, value []byte) error {
	if err := h.begin(); err != nil {
		return err
	}
	defer h.end()
	if h.k != nil {
		return h.k.Lookup(key, value)
	}
	return h.lookupLocked(key, value)
}

func (h *mapHandle) lookupLocked(key, value []byte) error {
	v, err := h.u.Lookup(key)
	if err != nil {
		return userErr(err)
	}
	copy(value, v)
	return nil
}

func (h *mapHandle) update(key, value []byte, flags ebpf.MapUpdateFlags) error {
	if err := h.begin(); err != nil {
		return err
	}
	defer h.end()
	if h.k != nil {
		return h.k.Update(key, value, flags)
	}
	return userErr(h.u.Update(key, value, uint64(flags)))
}

func (h *mapHandle) delete(key []byte) error {
	if err := h.begin(); err != nil {
		return err
	}
	defer h.end()
	if h.k != nil {
		return h.k.Delete(key)
	}
	return userErr(h.u.Delete(key))
}

// lookupAndDelete copies the value under key into value and removes the
// entry, in one step for user-space maps as for kernel maps.
func (h *mapHandle) lookupAndDelete(key, value []byte) error {
	if err := h.begin(); err != nil {
		return err
	}
	defer h.end()
	if h.k != nil {
		return h.k.LookupAndDelete(key, value)
	}
	if err := h.lookupLocked(key, value); err != nil {
		return err
	}
	return userErr(h.u.Delete(key))
}

// maxIterationRestarts bounds how often All starts over because the key it
// stood on was deleted by someone else.
const maxIterationRestarts = 100

// nextEntry returns the key after key (nil: the first) with its value
// copied into value, or nil at the end, in one step under the map's lock.
// restarted reports that key was no longer in the map, so the key returned
// is the first.
func (h *mapHandle) nextEntry(key, value []byte) (next []byte, restarted bool, err error) {
	if err := h.begin(); err != nil {
		return nil, false, err
	}
	defer h.end()
	if key != nil {
		if _, err := h.u.Lookup(key); err != nil {
			restarted, key = true, nil
		}
	}
	next = make([]byte, h.keySize())
	if err := h.u.NextKey(key, next); err != nil {
		if errors.Is(err, runtime.ErrKeyNotExist) {
			return nil, restarted, nil
		}
		return nil, restarted, err
	}
	return next, restarted, h.lookupLocked(next, value)
}

// userEntries calls yield with each key of a user-space map, its value
// copied into value, each entry read in one step under the map's lock.
// When the key iteration stood on was deleted meanwhile it starts over,
// as the kernel and cilium/ebpf's iterator do, a bounded number of times.
func (h *mapHandle) userEntries(value []byte, yield func(key []byte) bool) error {
	var key []byte
	restarts := 0
	for {
		next, restarted, err := h.nextEntry(key, value)
		if err != nil || next == nil {
			return err
		}
		if restarted {
			if restarts++; restarts > maxIterationRestarts {
				return fmt.Errorf("map %s: %w", h.name, ebpf.ErrIterationAborted)
			}
		}
		if !yield(next) {
			return nil
		}
		key = next
	}
}

// entries calls yield with each entry of the map copied into key and
// value (a shorter entry leaves the rest zero), kernel or user-space.
func (h *mapHandle) entries(key, value []byte, yield func() bool) error {
	if h.k != nil {
		return h.kernelEntries(func(kb, vb []byte) bool {
			clear(key[copy(key, kb):])
			clear(value[copy(value, vb):])
			return yield()
		})
	}
	return h.userEntries(value, func(kb []byte) bool {
		clear(key[copy(key, kb):])
		return yield()
	})
}

// kernelEntries calls yield with each entry of a kernel map. Each step of
// the iteration is a call of its own, so yield runs outside any: it may
// close the set, and iteration then ends with ErrClosed.
func (h *mapHandle) kernelEntries(yield func(key, value []byte) bool) error {
	it := h.k.Iterate()
	var kb, vb []byte
	for {
		var ok bool
		if err := h.call(func() error { ok = it.Next(&kb, &vb); return nil }); err != nil {
			return err
		}
		if !ok {
			return it.Err()
		}
		if !yield(kb, vb) {
			return nil
		}
	}
}

// Map is a map with keys of type K and values of type V: a kernel map, or
// a user-space map when the object runs in process or only user-space
// programs use the map.
//
// Its methods are compiled in every skeleton package for every Map type
// it declares, so each is a thin typed door to mapHandle's untyped code.
type Map[K, V any] struct {
	_ incomparable
	h mapHandle
}

// incomparable, the first field of the generic handle types, makes them
// incomparable: a package that declares one compiles no equality function
// for it. (First, because a zero-size last field is padded.)
type incomparable [0]func()

// NewMap returns the map name of s, checking that the Go types have the
// map's key and value sizes, so a mismatch is found at load time and not as
// corrupted data.
func NewMap[K, V any](s *Set, name string) (*Map[K, V], error) {
	m := new(Map[K, V])
	if err := typedHandle[K, V](s, name, &m.h); err != nil {
		return nil, err
	}
	return m, nil
}

// typedHandle sets *h to the map name of s after checking that K and V
// have its key and value sizes.
func typedHandle[K, V any](s *Set, name string, h *mapHandle) error {
	return s.sizedHandle(h, name, sizeOf[K](), sizeOf[V]())
}

// sizedHandle sets *h to the map name of s after checking that its keys
// have ks bytes and its values vs (vs < 0: any).
func (s *Set) sizedHandle(h *mapHandle, name string, ks, vs int) error {
	var err error
	if *h, err = s.mapHandle(name); err != nil {
		return err
	}
	return h.checkSizes(ks, vs)
}

// Raw returns the kernel map, or nil when the map lives in the process.
func (m *Map[K, V]) Raw() *ebpf.Map { return m.h.k }

// Lookup returns the value stored under key. A missing key is an error that
// satisfies errors.Is(err, ebpf.ErrKeyNotExist).
func (m *Map[K, V]) Lookup(key K) (V, error) {
	var v V
	err := m.h.lookup(bytesOf(&key), bytesOf(&v))
	return v, err
}

// Update stores value under key with the given flags (ebpf.UpdateAny,
// UpdateNoExist, UpdateExist).
func (m *Map[K, V]) Update(key K, value V, flags ebpf.MapUpdateFlags) error {
	return m.h.update(bytesOf(&key), bytesOf(&value), flags)
}

// Put stores value under key, creating or replacing it.
func (m *Map[K, V]) Put(key K, value V) error {
	return m.Update(key, value, ebpf.UpdateAny)
}

// Delete removes key.
func (m *Map[K, V]) Delete(key K) error {
	return m.h.delete(bytesOf(&key))
}

// LookupAndDelete returns the value under key and removes it.
func (m *Map[K, V]) LookupAndDelete(key K) (V, error) {
	var v V
	err := m.h.lookupAndDelete(bytesOf(&key), bytesOf(&v))
	return v, err
}

// All iterates over the map's entries. Iteration stops at the first error,
// which *errp receives when errp is not nil.
func (m *Map[K, V]) All(errp *error) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		var k K
		var v V
		err := m.h.entries(bytesOf(&k), bytesOf(&v), func() bool { return yield(k, v) })
		if errp != nil {
			*errp = err
		}
	}
}

// Keys returns every key of the map m.
//
// Keys and the batch operations are functions, not methods of Map: a
// method is compiled in every skeleton package for every map type it
// declares, used or not; a function only where it is called.
func Keys[K, V any](m *Map[K, V]) ([]K, error) {
	var keys []K
	var err error
	for k := range m.All(&err) {
		keys = append(keys, k)
	}
	return keys, err
}

// BatchLookup reads up to len(keys) entries of m starting at cursor (a zero
// cursor starts at the beginning) and returns how many it read. At the end of
// the map the error is ebpf.ErrKeyNotExist, with the last entries read.
// Kernel maps only (cilium/ebpf's cursor is opaque): iterate a user-space
// map with All.
func BatchLookup[K, V any](m *Map[K, V], cursor *ebpf.MapBatchCursor, keys []K, values []V) (int, error) {
	if m.h.k == nil {
		return 0, ErrInProcess
	}
	if len(values) < len(keys) {
		return 0, errors.New("batch lookup: fewer values than keys")
	}
	if err := m.h.begin(); err != nil {
		return 0, err
	}
	defer m.h.end()
	return m.h.k.BatchLookup(cursor, keys, values[:len(keys)], nil)
}

// BatchUpdate stores keys[i] → values[i] into m in one system call, or for a
// user-space map in one step under its lock. It returns how many entries
// it stored before any error.
func BatchUpdate[K, V any](m *Map[K, V], keys []K, values []V, flags ebpf.MapUpdateFlags) (int, error) {
	if len(values) != len(keys) {
		return 0, errors.New("batch update: keys and values differ in length")
	}
	if err := m.h.begin(); err != nil {
		return 0, err
	}
	defer m.h.end()
	if m.h.k != nil {
		return m.h.k.BatchUpdate(keys, values, &ebpf.BatchOptions{ElemFlags: uint64(flags)})
	}
	for i := range keys {
		if err := userErr(m.h.u.Update(bytesOf(&keys[i]), bytesOf(&values[i]), uint64(flags))); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// BatchDelete removes keys from m in one system call, or for a user-space map in
// one step under its lock. It returns how many it removed before any
// error (a missing key is ebpf.ErrKeyNotExist).
func BatchDelete[K, V any](m *Map[K, V], keys []K) (int, error) {
	if err := m.h.begin(); err != nil {
		return 0, err
	}
	defer m.h.end()
	if m.h.k != nil {
		return m.h.k.BatchDelete(keys, nil)
	}
	for i := range keys {
		if err := userErr(m.h.u.Delete(bytesOf(&keys[i]))); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// RawMap returns the kernel map name of s, for map kinds without a typed
// view, or nil when the object runs in process.
func RawMap(s *Set, name string) (*ebpf.Map, error) {
	if s.Coll == nil {
		return nil, nil
	}
	m := s.Coll.Maps[name]
	if m == nil {
		return nil, fmt.Errorf("map %s: not loaded", name)
	}
	return m, nil
}
