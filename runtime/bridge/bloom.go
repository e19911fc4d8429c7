package bridge

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
)

// BloomFilter is a BPF_MAP_TYPE_BLOOM_FILTER of values V: a set that
// answers "maybe present" or "certainly absent". It has no keys, so it is
// not a Map: Push adds a value and Contains tests one. Only the kernel has
// bloom filters; in process both return ErrInProcess.
type BloomFilter[V any] struct {
	_ incomparable
	h mapHandle
}

// NewBloomFilter returns the bloom filter name of s, checking that V has
// its value size.
func NewBloomFilter[V any](s *Set, name string) (*BloomFilter[V], error) {
	h, err := s.mapHandle(name)
	if err != nil {
		return nil, err
	}
	if h.k != nil && int(h.k.ValueSize()) != sizeOf[V]() {
		return nil, fmt.Errorf("map %s: value size %d, Go value type has %d bytes", h.name, h.k.ValueSize(), sizeOf[V]())
	}
	return &BloomFilter[V]{h: h}, nil
}

// Raw returns the kernel map, or nil in process.
func (b *BloomFilter[V]) Raw() *ebpf.Map { return b.h.k }

// Push adds v to the filter.
func (b *BloomFilter[V]) Push(v V) error {
	if b.h.k == nil {
		return fmt.Errorf("map %s: %w", b.h.name, ErrInProcess)
	}
	return b.h.call(func() error { return b.h.k.Update(nil, bytesOf(&v), ebpf.UpdateAny) })
}

// Contains reports whether v may be in the filter: false means it was
// never pushed; true may be a false positive, at the rate the filter's
// size and number of hash functions give.
func (b *BloomFilter[V]) Contains(v V) (bool, error) {
	if b.h.k == nil {
		return false, fmt.Errorf("map %s: %w", b.h.name, ErrInProcess)
	}
	found := false
	err := b.h.call(func() error {
		// The kernel reads the value to test from the lookup's value
		// buffer.
		err := b.h.k.Lookup(nil, bytesOf(&v))
		switch {
		case err == nil:
			found = true
		case errors.Is(err, ebpf.ErrKeyNotExist):
			err = nil
		}
		return err
	})
	return found, err
}
