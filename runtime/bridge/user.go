package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

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
	maps   map[string]runtime.Map
	progs  map[string]*runtime.Program
	unmaps []func() error
}

func (u *UserSet) close() {
	for _, p := range u.progs {
		p.Close()
	}
	for _, f := range u.unmaps {
		f()
	}
	u.unmaps = nil
}

// Map returns the runtime's view of the map name, or nil.
func (u *UserSet) Map(name string) runtime.Map { return u.maps[name] }

func loadUser(s *Set, externs map[string]runtime.Func, o *LoadOptions) (*UserSet, error) {
	spec := s.Spec
	u := &UserSet{maps: map[string]runtime.Map{}, progs: map[string]*runtime.Program{}}
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
	if s.Coll == nil {
		// In process every map lives here, so that the host reaches the
		// kernel programs' maps too (to feed them synthetic data, say).
		for name, m := range spec.Maps {
			if _, ok := runtimeMapType(m.Type); ok {
				needed[name] = true
			}
		}
	}
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
			m, err = u.kernelMap(name, ms, s.Coll.Maps[name])
		} else {
			m, err = userMap(ms, spec.ByteOrder)
		}
		if err != nil {
			u.close()
			return nil, fmt.Errorf("map %s: %w", name, err)
		}
		u.maps[name] = m
	}

	helpers := runtime.Builtins()
	bindBuiltins(helpers, o)
	for _, name := range userProgs {
		ps, err := programSpec(spec, spec.Programs[name], u.maps)
		if err != nil {
			u.close()
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		prog, err := runtime.Load(ps, &runtime.Options{Helpers: helpers, Externs: externs, Budget: o.Budget, Output: o.Output})
		if err != nil {
			u.close()
			return nil, fmt.Errorf("program %s (section %s): %w", name, spec.Programs[name].SectionName, err)
		}
		u.progs[name] = prog
	}
	return u, nil
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

// userMap creates a user-space map with the spec's initial contents (a data
// section's bytes, or byte-slice key/value pairs).
func userMap(ms *ebpf.MapSpec, order binary.ByteOrder) (runtime.Map, error) {
	if _, ok := runtimeMapType(ms.Type); !ok {
		return nil, fmt.Errorf("the runtime has no %v maps", ms.Type)
	}
	m, err := runtime.NewMap(runtimeSpec(ms))
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

// kernelMap gives user programs a view of a kernel map: live memory for
// mmapable arrays, system calls with copy semantics otherwise.
func (u *UserSet) kernelMap(name string, ms *ebpf.MapSpec, km *ebpf.Map) (runtime.Map, error) {
	spec := runtimeSpec(ms)
	spec.Flags = km.Flags()
	if km.Type() == ebpf.Array && km.Flags()&flagMmapable != 0 {
		mem, unmap, err := mmapMap(km, spec.ReadOnly() || runtimeSpec(ms).ReadOnly())
		if err != nil {
			return nil, err
		}
		u.unmaps = append(u.unmaps, unmap)
		return &mmapArray{spec: spec, mem: mem, stride: (int(spec.ValueSize) + 7) &^ 7}, nil
	}
	return &syscallMap{spec: spec, m: km}, nil
}

const flagMmapable = 1 << 10 // BPF_F_MMAPABLE

// mmapArray is a kernel BPF_F_MMAPABLE array mapped into the process.
type mmapArray struct {
	spec   runtime.MapSpec
	mem    []byte
	stride int
}

func (a *mmapArray) Spec() runtime.MapSpec { return a.spec }

func (a *mmapArray) index(key []byte) (int, bool) {
	if len(key) != 4 {
		return 0, false
	}
	i := binary.NativeEndian.Uint32(key)
	return int(i), i < a.spec.MaxEntries
}

func (a *mmapArray) Lookup(key []byte) ([]byte, error) {
	i, ok := a.index(key)
	if !ok {
		return nil, runtime.ErrKeyNotExist
	}
	return a.mem[i*a.stride : i*a.stride+int(a.spec.ValueSize) : i*a.stride+int(a.spec.ValueSize)], nil
}

func (a *mmapArray) Update(key, value []byte, flags uint64) error {
	i, ok := a.index(key)
	switch {
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

func (a *mmapArray) NextKey(key, next []byte) error {
	n := uint32(0)
	if i, ok := a.index(key); ok {
		n = uint32(i) + 1
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
	spec runtime.MapSpec
	m    *ebpf.Map
}

func (k *syscallMap) Spec() runtime.MapSpec { return k.spec }

func kernelErr(err error) error {
	switch {
	case err == nil:
		return nil
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
			return nil, kernelErr(err)
		}
		if b == nil {
			return nil, runtime.ErrKeyNotExist
		}
		return b[:k.spec.ValueSize:k.spec.ValueSize], nil
	}
	v := make([]byte, k.spec.ValueSize)
	if err := k.m.Lookup(key, v); err != nil {
		return nil, kernelErr(err)
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
		return kernelErr(k.m.Update(key, per, ebpf.MapUpdateFlags(flags)))
	}
	return kernelErr(k.m.Update(key, value, ebpf.MapUpdateFlags(flags)))
}

func (k *syscallMap) Delete(key []byte) error { return kernelErr(k.m.Delete(key)) }

func (k *syscallMap) NextKey(key, next []byte) error {
	var prev any
	if key != nil {
		prev = key
	}
	b, err := k.m.NextKeyBytes(prev)
	if err != nil {
		return kernelErr(err)
	}
	if b == nil {
		return runtime.ErrKeyNotExist
	}
	copy(next, b)
	return nil
}

// programSpec turns a ubpf/ program of the object into the runtime's form:
// its instructions (bpf-to-bpf callees included, as cilium/ebpf links them)
// with map, data-section and extern references rewritten to indices.
func programSpec(spec *ebpf.CollectionSpec, p *ebpf.ProgramSpec, maps map[string]runtime.Map) (*runtime.ProgramSpec, error) {
	insns := make(asm.Instructions, len(p.Instructions))
	copy(insns, p.Instructions)
	rs := &runtime.ProgramSpec{Name: p.Name, Symbols: map[int]string{}}
	mapIdx := map[string]int{}
	externIdx := map[string]int{}
	slot := 0
	for i := range insns {
		ins := &insns[i]
		if sym := ins.Symbol(); sym != "" {
			rs.Symbols[slot] = sym
		}
		slot += int(ins.Size() / asm.InstructionSize)
		ref := ins.Reference()
		switch {
		case ref != "" && ins.IsLoadFromMap():
			m := maps[ref]
			if m == nil {
				return nil, fmt.Errorf("instruction %d: map %s not loaded", i, ref)
			}
			idx, ok := mapIdx[ref]
			if !ok {
				idx = len(rs.Maps)
				mapIdx[ref] = idx
				rs.Maps = append(rs.Maps, m)
			}
			off := uint64(ins.Constant) >> 32
			if ins.Src == asm.PseudoMapValue {
				ins.Src = asm.PseudoMapValue + 4 // BPF_PSEUDO_MAP_IDX_VALUE
			} else {
				ins.Src = asm.PseudoMapFD + 4 // BPF_PSEUDO_MAP_IDX
			}
			ins.Constant = int64(off<<32 | uint64(idx))
		case ref != "" && ins.IsKfuncCall():
			idx, ok := externIdx[ref]
			if !ok {
				idx = len(rs.Externs)
				externIdx[ref] = idx
				rs.Externs = append(rs.Externs, ref)
			}
			ins.Constant = int64(idx)
			ins.Offset = 0
		}
	}
	var buf bytes.Buffer
	if err := insns.Marshal(&buf, spec.ByteOrder); err != nil {
		return nil, err
	}
	decoded, err := runtime.DecodeInstructions(buf.Bytes(), spec.ByteOrder)
	if err != nil {
		return nil, err
	}
	rs.Instructions = decoded
	return rs, nil
}

// TranslationSpec returns the runtime's form of the user-space program
// name, with stand-in user-space maps, for translating it ahead of time.
// Map and global references resolve the same way as when the object is
// loaded, which Bind checks.
func TranslationSpec(spec *ebpf.CollectionSpec, name string) (*runtime.ProgramSpec, error) {
	p := spec.Programs[name]
	if p == nil || !IsUserProgram(p) {
		return nil, fmt.Errorf("no user-space program %s", name)
	}
	maps := map[string]runtime.Map{}
	for ref := range references(p, spec.Maps) {
		m, err := userMap(spec.Maps[ref], spec.ByteOrder)
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", ref, err)
		}
		maps[ref] = m
	}
	return programSpec(spec, p, maps)
}

// userRun is what every kind of user-space program has: the loaded
// program, its translation when the skeleton has one, and the guards of
// Run (one run at a time, none after Close).
type userRun struct {
	name     string
	set      *Set
	mu       sync.Mutex
	prog     *runtime.Program
	compiled *runtime.Compiled
}

func newUserRun(s *Set, name string, translation func() runtime.Translation) (*userRun, error) {
	if s.User == nil || s.User.progs[name] == nil {
		return nil, fmt.Errorf("user program %s: not loaded", name)
	}
	p := &userRun{name: name, set: s, prog: s.User.progs[name]}
	if translation != nil {
		c, err := p.prog.Bind(translation())
		if err != nil {
			return nil, fmt.Errorf("user program %s: %w", name, err)
		}
		p.compiled = c
	}
	return p, nil
}

// run runs the program over ctx (r1 its address, r2 its length).
func (p *userRun) run(ctx []byte) (uint64, error) {
	p.set.life.RLock()
	defer p.set.life.RUnlock()
	if p.set.closed.Load() {
		return 0, fmt.Errorf("user program %s: %w", p.name, ErrClosed)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var r0 uint64
	var err error
	if p.compiled != nil {
		r0, err = p.compiled.Run(ctx)
	} else {
		r0, err = p.prog.Run(ctx)
	}
	if err != nil {
		return r0, fmt.Errorf("user program %s: %w", p.name, err)
	}
	return r0, nil
}

// UserProgram is a ubpf/ program whose context is a C struct of Go type T
// (struct{} for programs without one). It runs its ahead-of-time
// translation when the skeleton has one, else the interpreter; both give
// the same results and errors.
type UserProgram[T any] struct {
	r *userRun
}

// NewUserProgram returns the user-space program name of s. translation,
// when not nil, returns the program's translation into Go, which is bound
// to the loaded program (Bind checks that they match).
func NewUserProgram[T any](s *Set, name string, translation func() runtime.Translation) (*UserProgram[T], error) {
	r, err := newUserRun(s, name, translation)
	if err != nil {
		return nil, err
	}
	return &UserProgram[T]{r}, nil
}

// Translated reports whether Run uses the ahead-of-time translation.
func (p *UserProgram[T]) Translated() bool { return p.r.compiled != nil }

// Raw returns the runtime program. Its Run is the interpreter, and
// running it directly bypasses Run's guards: one run at a time, and none
// after Close.
func (p *UserProgram[T]) Raw() *runtime.Program { return p.r.prog }

// Run runs the program once with ctx as its context: the program reads ctx
// and its writes to the context land in ctx. ctx may be nil. A program that
// faults or exhausts its budget returns an error naming the instruction;
// the process and the maps are unaffected by the failed run beyond the
// writes it made before failing.
func (p *UserProgram[T]) Run(ctx *T) (uint64, error) {
	var b []byte
	if ctx != nil {
		b = bytesOf(ctx)
	}
	return p.r.run(b)
}

// BufferProgram is a ubpf/ program in ubpf's calling convention,
// u64 f(u8 *data, u64 len): it runs over a byte buffer.
type BufferProgram struct {
	r *userRun
}

// NewBufferProgram returns the user-space program name of s, which takes
// a buffer and its length; translation as for NewUserProgram.
func NewBufferProgram(s *Set, name string, translation func() runtime.Translation) (*BufferProgram, error) {
	r, err := newUserRun(s, name, translation)
	if err != nil {
		return nil, err
	}
	return &BufferProgram{r}, nil
}

// Translated reports whether Run uses the ahead-of-time translation.
func (p *BufferProgram) Translated() bool { return p.r.compiled != nil }

// Raw returns the runtime program (see UserProgram.Raw).
func (p *BufferProgram) Raw() *runtime.Program { return p.r.prog }

// Run runs the program once over data: r1 points at data (writable: the
// program's writes land in it), r2 holds len(data). data may be nil.
func (p *BufferProgram) Run(data []byte) (uint64, error) {
	return p.r.run(data)
}
