package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

// UserSet is the user-space half of a loaded object: its ubpf/ programs in
// the runtime and the maps they reach.
//
// What is shared with the kernel side, and how:
//   - a map both sides use is the kernel map. BPF_F_MMAPABLE arrays, which
//     include the .data, .bss and .rodata sections cilium/ebpf creates, are
//     mapped into the process, so both sides read and write the same memory
//     live (.rodata read-only);
//   - other kernel maps (hash maps, ...) are reached through system calls:
//     a lookup returns a private copy that lives until the run ends, and a
//     change reaches the kernel only through bpf_map_update_elem; a per-CPU
//     map shows CPU 0's value and an update writes every CPU;
//   - maps and sections only user programs use are user-space maps, and
//     in process every map is.
type UserSet struct {
	maps     map[string]runtime.Map
	progs    programs // nil without user-space programs
	unmaps   []func() error
	released atomic.Bool // the kernel maps' views are unmapped or closed
}

// programs is what the runtime's VM adds to a UserSet: the loaded
// user-space programs (user_programs.go). The VM's files are the only ones
// that name its types, so that a module whose objects have no user-space
// programs carries the maps without the VM (see the package doc).
type programs interface {
	close()
	// hooks returns the hooks of spec whose programs are loaded, each
	// with run state of its own for Serve to run it and the key that
	// finds the hook from a host function of its run (Tool.machines).
	hooks(spec *ebpf.CollectionSpec) ([]loadedHook, error)
}

// loadedHook is a hook of a set's loaded user-space programs.
type loadedHook struct {
	Hook
	e    hookRunner
	key  any
	size int // of the program's context (contextSize)
}

// hookRunner runs a hook's program over a context and its length.
type hookRunner interface {
	runLen(ctx []byte, n uint64) (uint64, error)
}

func (u *UserSet) close() {
	u.released.Store(true)
	if u.progs != nil {
		u.progs.close()
	}
	for _, f := range u.unmaps {
		f()
	}
	u.unmaps = nil
}

// Map returns the runtime's view of the map name, or nil.
func (u *UserSet) Map(name string) runtime.Map { return u.maps[name] }

// userParts is what Load gives load for the user-space programs: the VM's
// part. LoadKernelOnly gives none, so that its code names none of it.
type userParts struct {
	// kernelView is the view user-space programs have of a kernel map.
	kernelView func(u *UserSet, name string, ms *ebpf.MapSpec, km *ebpf.Map) (runtime.Map, error)
	// kconfig is the .kconfig map of the externs progs read, nil when
	// they read none.
	kconfig func(spec *ebpf.CollectionSpec, progs []*ebpf.ProgramSpec, mem *runtime.MapMemory) (runtime.Map, error)
	// programs loads the user-space programs names into the set's UserSet.
	programs func(s *Set, names []string, o *LoadOptions) error
}

// loadMaps creates the UserSet of s: the runtime's view of the maps the
// user-space programs (those o selects) use, and in process of every map.
// It returns the names of those programs, sorted; with some, vm must not
// be nil.
func loadMaps(s *Set, o *LoadOptions, vm *userParts) (*UserSet, []string, error) {
	spec := s.Spec
	u := &UserSet{maps: map[string]runtime.Map{}}
	var userProgs []string
	needed := map[string]bool{}
	for name, p := range spec.Programs {
		if !IsUserProgram(p) || o.Programs != nil && !slices.Contains(o.Programs, name) {
			continue
		}
		userProgs = append(userProgs, name)
		for r := range references(p, spec.Maps) {
			needed[r] = true
		}
	}
	sort.Strings(userProgs)
	if len(userProgs) > 0 && vm == nil {
		return nil, nil, fmt.Errorf("the object has user-space programs (%s): LoadKernelOnly cannot load them, Load does", strings.Join(userProgs, ", "))
	}
	if s.Coll == nil {
		// In process every map lives here, so that the host reaches the
		// kernel programs' maps too (to feed them synthetic data, say).
		for name, m := range spec.Maps {
			if _, ok := runtimeMapType(m.Type); ok {
				needed[name] = true
			}
		}
	}
	mem := runtime.NewMapMemory(o.MapMemory)
	names := make([]string, 0, len(needed))
	for n := range needed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ms := spec.Maps[name]
		var m runtime.Map
		var err error
		if s.Coll != nil && s.Coll.Maps[name] != nil {
			m, err = vm.kernelView(u, name, ms, s.Coll.Maps[name])
		} else {
			m, err = userMap(withVariables(spec, name, ms), spec.ByteOrder, mem)
		}
		if errors.Is(err, runtime.ErrNoMemory) {
			err = fmt.Errorf("%w (LoadOptions.MapMemory raises the limit)", err)
		}
		if err != nil {
			u.close()
			return nil, nil, fmt.Errorf("map %s: %w", name, err)
		}
		u.maps[name] = m
	}
	if len(userProgs) > 0 {
		// The .kconfig externs the user-space programs read, filled as
		// for kernel programs.
		progs := make([]*ebpf.ProgramSpec, len(userProgs))
		for i, name := range userProgs {
			progs[i] = spec.Programs[name]
		}
		m, err := vm.kconfig(spec, progs, mem)
		if err != nil {
			u.close()
			return nil, nil, fmt.Errorf("user-space programs: %w", err)
		}
		if m != nil {
			u.maps[kconfigMap] = m
		}
	}
	return u, userProgs, nil
}

// runtimeMapType returns the runtime's type for a map type it implements.
func runtimeMapType(t ebpf.MapType) (runtime.MapType, bool) {
	switch t {
	case ebpf.Hash, ebpf.Array, ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUHash, ebpf.LRUCPUHash, ebpf.RingBuf:
		return runtime.MapType(t), true
	}
	return 0, false
}

func runtimeSpec(ms *ebpf.MapSpec) runtime.MapSpec {
	return runtime.MapSpec{Name: ms.Name, Type: runtime.MapType(ms.Type), KeySize: ms.KeySize, ValueSize: ms.ValueSize, MaxEntries: ms.MaxEntries, Flags: ms.Flags}
}

// withVariables is the data section ms (the map name of spec) with the
// values of its variables written in: cilium/ebpf keeps a value set before
// load (VariableSpec.Set) in the variable and writes it into the section
// only when it creates the kernel map, and a user-space map must do the
// same. Other maps are returned as they are.
func withVariables(spec *ebpf.CollectionSpec, name string, ms *ebpf.MapSpec) *ebpf.MapSpec {
	if len(ms.Contents) != 1 {
		return ms
	}
	data, ok := ms.Contents[0].Value.([]byte)
	if !ok {
		return ms
	}
	var out *ebpf.MapSpec
	for _, v := range spec.Variables {
		if v.SectionName != name || v.Value == nil || uint64(v.Offset)+uint64(len(v.Value)) > uint64(len(data)) {
			continue
		}
		if out == nil {
			out = ms.Copy()
			data = slices.Clone(data)
			out.Contents[0].Value = data
		}
		copy(data[v.Offset:], v.Value)
	}
	if out == nil {
		return ms
	}
	return out
}

// userMap creates a user-space map with the spec's initial contents (a data
// section's bytes, or byte-slice key/value pairs), its memory counted in mem.
func userMap(ms *ebpf.MapSpec, order binary.ByteOrder, mem *runtime.MapMemory) (runtime.Map, error) {
	if _, ok := runtimeMapType(ms.Type); !ok {
		return nil, fmt.Errorf("the runtime has no %v maps", ms.Type)
	}
	m, err := runtime.NewMapIn(runtimeSpec(ms), mem)
	if err != nil {
		return nil, err
	}
	for i, kv := range ms.Contents {
		key, ok1 := contentBytes(kv.Key, int(ms.KeySize), order)
		val, ok2 := contentBytes(kv.Value, int(ms.ValueSize), order)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("initial contents entry %d: unsupported key or value type %T/%T", i, kv.Key, kv.Value)
		}
		if err := m.Update(key, val, 0); err != nil {
			return nil, fmt.Errorf("initial contents entry %d: %w", i, err)
		}
	}
	return m, nil
}

func contentBytes(v any, size int, order binary.ByteOrder) ([]byte, bool) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case uint32:
		b = make([]byte, 4)
		order.PutUint32(b, x)
	case uint64:
		b = make([]byte, 8)
		order.PutUint64(b, x)
	default:
		return nil, false
	}
	if len(b) < size {
		b = append(bytes.Clone(b), make([]byte, size-len(b))...)
	}
	return b[:size], true
}
