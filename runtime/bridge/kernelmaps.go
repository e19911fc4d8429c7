package bridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

// kernelMap gives user programs a view of a kernel map: live memory for
// mmapable arrays, system calls with copy semantics otherwise. Once the
// set is released the view fails with ErrClosed: the memory is unmapped
// and the file descriptor closed by then. (Runs never see that: the set is
// released after the last of them.)
func (u *UserSet) kernelMap(name string, ms *ebpf.MapSpec, km *ebpf.Map) (runtime.Map, error) {
	spec := runtimeSpec(ms)
	spec.Flags = km.Flags()
	if km.Type() == ebpf.Array && km.Flags()&flagMmapable != 0 {
		mem, unmap, err := mmapMap(km, spec.ReadOnly())
		if err != nil {
			return nil, err
		}
		u.unmaps = append(u.unmaps, unmap)
		return &mmapArray{spec: spec, mem: mem, stride: (int(spec.ValueSize) + 7) &^ 7, released: &u.released}, nil
	}
	return &syscallMap{spec: spec, m: km, released: &u.released}, nil
}

const flagMmapable = 1 << 10 // BPF_F_MMAPABLE

// mmapArray is a kernel BPF_F_MMAPABLE array mapped into the process.
type mmapArray struct {
	spec     runtime.MapSpec
	mem      []byte
	stride   int
	released *atomic.Bool
}

func (a *mmapArray) Spec() runtime.MapSpec { return a.spec }

func (a *mmapArray) index(key []byte) (int, bool) {
	if len(key) != 4 || a.released.Load() {
		return 0, false
	}
	i := binary.NativeEndian.Uint32(key)
	return int(i), i < a.spec.MaxEntries
}

func (a *mmapArray) Lookup(key []byte) ([]byte, error) {
	i, ok := a.index(key)
	if !ok {
		return nil, a.missing()
	}
	return a.mem[i*a.stride : i*a.stride+int(a.spec.ValueSize) : i*a.stride+int(a.spec.ValueSize)], nil
}

func (a *mmapArray) Update(key, value []byte, flags uint64) error {
	i, ok := a.index(key)
	switch {
	case a.released.Load():
		return ErrClosed
	case !ok:
		return runtime.ErrMapFull
	case flags == 1: // BPF_NOEXIST: array elements always exist
		return runtime.ErrKeyExist
	case len(value) != int(a.spec.ValueSize):
		return runtime.ErrInvalidArg
	}
	copy(a.mem[i*a.stride:], value)
	return nil
}

func (a *mmapArray) Delete([]byte) error { return runtime.ErrInvalidArg }

// missing is the error of a key index refused.
func (a *mmapArray) missing() error {
	if a.released.Load() {
		return ErrClosed
	}
	return runtime.ErrKeyNotExist
}

func (a *mmapArray) NextKey(key, next []byte) error {
	n := uint32(0)
	if i, ok := a.index(key); ok {
		n = uint32(i) + 1
	}
	if a.released.Load() {
		return ErrClosed
	}
	if n >= a.spec.MaxEntries {
		return runtime.ErrKeyNotExist
	}
	binary.NativeEndian.PutUint32(next, n)
	return nil
}

// syscallMap reaches a kernel map through system calls: lookups return a
// private copy.
type syscallMap struct {
	spec     runtime.MapSpec
	m        *ebpf.Map
	released *atomic.Bool
}

func (k *syscallMap) Spec() runtime.MapSpec { return k.spec }

func (k *syscallMap) kernelErr(err error) error {
	switch {
	case err == nil:
		return nil
	case k.released.Load():
		return ErrClosed
	case errors.Is(err, ebpf.ErrKeyNotExist):
		return runtime.ErrKeyNotExist
	case errors.Is(err, ebpf.ErrKeyExist):
		return runtime.ErrKeyExist
	case errors.Is(err, errE2BIG):
		return runtime.ErrMapFull
	case errors.Is(err, errEPERM):
		// A frozen map refuses writes from system calls.
		return fmt.Errorf("%w: %w", runtime.ErrReadOnly, err)
	}
	return err
}

func (k *syscallMap) perCPU() bool {
	switch k.m.Type() {
	case ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash:
		return true
	}
	return false
}

func (k *syscallMap) Lookup(key []byte) ([]byte, error) {
	if k.perCPU() {
		b, err := k.m.LookupBytes(key)
		if err != nil {
			return nil, k.kernelErr(err)
		}
		if b == nil {
			return nil, runtime.ErrKeyNotExist
		}
		return b[:k.spec.ValueSize:k.spec.ValueSize], nil
	}
	// A capacity that is a multiple of 8 aligns the copy for atomics.
	v := make([]byte, k.spec.ValueSize, (k.spec.ValueSize+7)&^7)
	if err := k.m.Lookup(key, v); err != nil {
		return nil, k.kernelErr(err)
	}
	return v, nil
}

func (k *syscallMap) Update(key, value []byte, flags uint64) error {
	if k.perCPU() {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		per := make([][]byte, n)
		for i := range per {
			per[i] = value
		}
		return k.kernelErr(k.m.Update(key, per, ebpf.MapUpdateFlags(flags)))
	}
	return k.kernelErr(k.m.Update(key, value, ebpf.MapUpdateFlags(flags)))
}

func (k *syscallMap) Delete(key []byte) error { return k.kernelErr(k.m.Delete(key)) }

func (k *syscallMap) NextKey(key, next []byte) error {
	var prev any
	if key != nil {
		prev = key
	}
	b, err := k.m.NextKeyBytes(prev)
	if err != nil {
		return k.kernelErr(err)
	}
	if b == nil {
		return runtime.ErrKeyNotExist
	}
	copy(next, b)
	return nil
}
