package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// This file is the run-time side of ahead-of-time translation: skelgen can
// turn a program into Go functions (package gen, Translate) that run
// against a loaded Program's Machine with the same memory, budget and
// errors as the interpreter. Translated code reports every failure by
// panicking with a value of an unexported type made here; Compiled.Run
// recovers those and turns them into the interpreter's errors, and lets any
// other panic through.

// Entry is the Go function a translated program starts in. r1 and r2 are
// the context's address and length, budget the instruction budget of the
// run; it returns r0 and the budget left.
type Entry func(m *Machine, r1, r2 uint64, budget int64) (r0 uint64, left int64)

// Imm is a resolved 64-bit immediate (map handle, map value address,
// function address) that a translation compiled in as a constant.
type Imm struct {
	Insn  int
	Value uint64
}

// Translation is what a translated program hands to Bind.
type Translation struct {
	Entry Entry
	// Insns is the number of instruction slots translated.
	Insns int
	// Imms are the lddw constants the translation assumed; Bind checks each
	// against the value Load resolved, so that a translation can never run
	// against a program whose maps or globals were laid out differently.
	Imms []Imm
	// Calls are the indices of the helper and extern calls, which the
	// translation makes through Machine.CallAt.
	Calls []int
}

// Compiled is a Program bound to its translation. Like a Program it runs
// one call at a time; Clone gives another goroutine its own.
type Compiled struct {
	p     *Program
	m     *Machine // p.m
	entry Entry
}

// Bind checks that t was translated from p's instructions and the same
// resolution of maps, globals and calls, and returns the pair.
func (p *Program) Bind(t Translation) (*Compiled, error) {
	if t.Entry == nil {
		return nil, fmt.Errorf("program %s: translation has no entry function", p.name)
	}
	if t.Insns != len(p.insns) {
		return nil, fmt.Errorf("program %s: translation of %d instructions, program has %d", p.name, t.Insns, len(p.insns))
	}
	for _, c := range t.Imms {
		got, ok := p.Imm64(c.Insn)
		if !ok {
			return nil, fmt.Errorf("program %s: instruction %d: translation expects an lddw", p.name, c.Insn)
		}
		if got != c.Value {
			return nil, fmt.Errorf("program %s: instruction %d: lddw resolves to %#x, translation assumed %#x", p.name, c.Insn, got, c.Value)
		}
	}
	for _, pc := range t.Calls {
		if _, _, ok := p.funcAt(pc); !ok {
			return nil, fmt.Errorf("program %s: instruction %d: translation expects a helper or extern call", p.name, pc)
		}
	}
	return &Compiled{p: p, m: p.m, entry: t.Entry}, nil
}

// Imm64 returns the value the lddw at instruction pc loads as Load
// resolved it: the constant, a map handle, the tagged address of a map's
// value or of a function. ok is false when pc is no lddw. The translator
// compiles these values in, and Bind checks them.
func (p *Program) Imm64(pc int) (v uint64, ok bool) {
	if pc < 0 || pc >= len(p.insns) || p.insns[pc].op != OpLddw {
		return 0, false
	}
	return uint64(p.insns[pc].imm), true
}

// Program returns the program c runs.
func (c *Compiled) Program() *Program { return c.p }

// Clone returns a Compiled with its own run state (see Program.Clone).
func (c *Compiled) Clone() *Compiled {
	q := c.p.Clone()
	return &Compiled{p: q, m: q.m, entry: c.entry}
}

// Run is Program.Run for the translation: the same context, stack, budget
// and errors.
func (c *Compiled) Run(ctx []byte) (uint64, error) {
	return c.RunLen(ctx, uint64(len(ctx)))
}

// RunLen is Program.RunLen for the translation.
func (c *Compiled) RunLen(ctx []byte, n uint64) (r0 uint64, err error) {
	m := c.m
	if uint64(len(ctx)) >= maxRegionSize || m.closed.Load() {
		return 0, m.refuse(ctx)
	}
	m.begin(ctx)
	// A run that returns ends here. One that panics ends in trapped; one
	// whose host function ended the goroutine (runtime.Goexit, where
	// recover returns nil) ends in the deferred function, and the
	// goroutine goes on ending. The deferred function must call recover
	// itself, and a run that returned need not call it at all.
	returned := false
	defer func() {
		if !returned {
			if x := recover(); x != nil {
				r0, err = 0, m.trapped(x)
			} else {
				m.endAborted()
			}
		}
	}()
	r0, m.budget = c.entry(m, ContextAddr, n, m.budget)
	returned = true
	m.end()
	return r0, nil
}

// endAborted ends a run that does not return, and then calls the abort
// function.
func (m *Machine) endAborted() {
	defer m.aborted()
	m.end()
}

// trapped ends a run whose translation panicked with x and returns the
// run's error; when x is no panic of translated code, it ends the run,
// calls the abort function and panics on (see trapError).
func (m *Machine) trapped(x any) error {
	ours := false
	defer func() {
		m.end()
		if !ours {
			m.aborted()
		}
	}()
	err := m.trapError(x)
	ours = true
	return m.named(err)
}

// trapError turns a panic of translated code into the interpreter's error.
func (m *Machine) trapError(x any) error {
	switch t := x.(type) {
	case fault:
		return m.Fault(t.addr, uint64(t.size), t.write, int(t.insn))
	case cellFault:
		return m.atomicFault(t.addr, uint64(t.size), int(t.insn))
	case budgetFault:
		return &RunError{Insn: int(t), Err: ErrBudget}
	case depthFault:
		return &RunError{Insn: int(t), Err: fmt.Errorf("%w: more than %d frames", ErrCallDepth, MaxFrames)}
	case *RunError:
		return t
	case error:
		// Only a wrong translation trips a span's safety net; it must not
		// take the host down.
		if t == errSpan {
			return &RunError{Insn: -1, Err: errSpan}
		}
	}
	panic(x)
}

// fault is the panic value of a failed access: the accessors below carry
// the instruction index so the error can name it, and build nothing on the
// hot path, so they stay within the inliner's budget.
type fault struct {
	addr  uint64
	insn  int32
	size  uint8
	write bool
}

type (
	budgetFault int
	depthFault  int
)

// Load8At .. Load64At are the loads of translated code: insn is the index
// of the load instruction, named in the error when the access fails.
func (m *Memory) Load8At(addr uint64, insn int) uint64 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o < uint64(len(m.rd[i])) {
		return uint64(m.rd[i][o])
	}
	panic(fault{addr, int32(insn), 1, false})
}

func (m *Memory) Load16At(addr uint64, insn int) uint64 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+2 <= uint64(len(m.rd[i])) {
		return uint64(binary.LittleEndian.Uint16(m.rd[i][o : o+2 : o+2]))
	}
	panic(fault{addr, int32(insn), 2, false})
}

func (m *Memory) Load32At(addr uint64, insn int) uint64 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+4 <= uint64(len(m.rd[i])) {
		return uint64(binary.LittleEndian.Uint32(m.rd[i][o : o+4 : o+4]))
	}
	panic(fault{addr, int32(insn), 4, false})
}

func (m *Memory) Load64At(addr uint64, insn int) uint64 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+8 <= uint64(len(m.rd[i])) {
		return binary.LittleEndian.Uint64(m.rd[i][o : o+8 : o+8])
	}
	panic(fault{addr, int32(insn), 8, false})
}

// Store8At .. Store64At are the stores of translated code.
func (m *Memory) Store8At(addr, v uint64, insn int) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o < uint64(len(m.wr[i])) {
		m.wr[i][o] = byte(v)
		return
	}
	panic(fault{addr, int32(insn), 1, true})
}

func (m *Memory) Store16At(addr, v uint64, insn int) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+2 <= uint64(len(m.wr[i])) {
		PutLE16(m.wr[i][o:o+2:o+2], v)
		return
	}
	panic(fault{addr, int32(insn), 2, true})
}

func (m *Memory) Store32At(addr, v uint64, insn int) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+4 <= uint64(len(m.wr[i])) {
		PutLE32(m.wr[i][o:o+4:o+4], v)
		return
	}
	panic(fault{addr, int32(insn), 4, true})
}

func (m *Memory) Store64At(addr, v uint64, insn int) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+8 <= uint64(len(m.wr[i])) {
		PutLE64(m.wr[i][o:o+8:o+8], v)
		return
	}
	panic(fault{addr, int32(insn), 8, true})
}

// SpanAt returns the n bytes at addr, for reading or (write) for writing,
// when they lie inside one region. Translated code takes the span a loop's
// accesses through one base register can reach before the loop starts and
// indexes it directly in a copy of the loop; when ok is false it runs the
// loop with every access checked. Spans stay valid until a helper is
// called, and loops that call one are not hoisted. A span is never
// shorter than the widest access (8 bytes).
func (m *Memory) SpanAt(addr, n uint64, write bool) (span []byte, ok bool) {
	t := m.rd
	if write {
		t = m.wr
	}
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(t)) && n >= 8 && n <= maxRegionSize && o+n <= uint64(len(t[i])) {
		return t[i][o : o+n : o+n], true
	}
	return nil, false
}

// ReadTail returns the readable bytes from addr to the end of its region,
// nil when addr is in none. Translated code takes the tail of a
// function's first argument, a buffer it was given as (data, len), and
// reads from it the loads that a comparison with data + len proves inside
// the buffer (TailLoad8 and its siblings), in copies of loops whose entry
// checks that len bytes fit in the tail. A tail stays valid until a helper
// is called.
func (m *Memory) ReadTail(addr uint64) []byte {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o <= uint64(len(m.rd[i])) {
		return m.rd[i][o:]
	}
	return nil
}

// TailLoad8 .. TailLoad64 read the little-endian value at offset i of a
// tail from ReadTail. The translation calls them only where i is proven
// in range, so an access outside is a wrong translation: it fails the run
// with a run error, and the fault path is a panic, which lets Go keep the
// loop's values in registers.
func TailLoad8(t []byte, i uint64) uint64 {
	if i < uint64(len(t)) {
		return uint64(t[i])
	}
	panic(errSpan)
}

func TailLoad16(t []byte, i uint64) uint64 {
	if i < uint64(len(t)) && uint64(len(t))-i >= 2 {
		return uint64(binary.LittleEndian.Uint16(t[i:]))
	}
	panic(errSpan)
}

func TailLoad32(t []byte, i uint64) uint64 {
	if i < uint64(len(t)) && uint64(len(t))-i >= 4 {
		return uint64(binary.LittleEndian.Uint32(t[i:]))
	}
	panic(errSpan)
}

func TailLoad64(t []byte, i uint64) uint64 {
	if i < uint64(len(t)) && uint64(len(t))-i >= 8 {
		return binary.LittleEndian.Uint64(t[i:])
	}
	panic(errSpan)
}

// BlockSpan is SpanAt for the straight-line runs of accesses through one
// base that translated code checks once. It is not inlined: inlined into
// such a run with a constant address, SpanAt made Go 1.26's compiler fail
// ("internal compiler error: can't find source for" an edge in register
// allocation), and one call per run costs no more than one of the checks
// it saves.
//
//go:noinline
func (m *Memory) BlockSpan(addr, n uint64, write bool) (span []byte, ok bool) {
	return m.SpanAt(addr, n, write)
}

// A Window gives views of type *A, A a byte array type ([n]byte), of a
// span from SpanAt at checked offsets. In the fast copy of a loop the
// translation makes one Window per base register and size before the loop
// and, in each iteration, takes a view at the first of the accesses the
// iteration makes through that base at constant distances (a single
// access has one of its own), then reads and writes it at constant
// offsets: one check for all of them, then one machine load or store
// each. The translation has proven every view inside the span; the check
// is the safety net that fails the run, an error and not a crash, rather
// than let a wrong proof touch memory outside it. A Window holds the
// span's address and how many offsets have room for an A, computed once,
// so a view costs one compare.
type Window[A any] struct {
	p   unsafe.Pointer
	end uint64 // offsets below end have room for an A
}

// WindowOf returns the Window of views of type *A into s.
func WindowOf[A any](s []byte) Window[A] {
	var a A
	n := uint64(unsafe.Sizeof(a))
	w := Window[A]{p: unsafe.Pointer(unsafe.SliceData(s))}
	if n <= uint64(len(s)) {
		w.end = uint64(len(s)) - n + 1
	}
	return w
}

// At returns the view at offset i of the span; it panics with a run error
// when the view would reach outside the span.
func (w Window[A]) At(i uint64) *A {
	if i >= w.end {
		panic(errSpan)
	}
	return (*A)(unsafe.Add(w.p, i))
}

var errSpan = errors.New("skelgen translation: access outside a hoisted span")

// Views returns s as n consecutive values of type A, for a translated loop
// that reads one per iteration: a loop whose trip count is n and whose
// accesses through one base cover exactly sizeof(A) bytes per iteration
// reads element k in iteration k, so indexing the slice is all the
// checking its accesses need, and Go proves the index of a range over n in
// range. It panics with a run error when s is shorter than n values.
func Views[A any](s []byte, n int) []A {
	var a A
	if size := uint64(unsafe.Sizeof(a)); n < 0 || size != 0 && uint64(n) > uint64(len(s))/size {
		panic(errSpan)
	}
	return unsafe.Slice((*A)(unsafe.Pointer(unsafe.SliceData(s))), n)
}

// opaqueZero is 0, in a variable the compiler cannot see through.
var opaqueZero uint64

// Opaque returns x in a way the Go compiler cannot fold: a translated loop
// passes a 64-bit constant that it reads through it, so that the constant
// stays in a register across the loop instead of being rebuilt (a 10-byte
// instruction) at each use, as the compiler does for a value it knows.
func Opaque(x uint64) uint64 { return x ^ opaqueZero }

// LoopTrips bounds the iterations of a loop whose counter starts at start,
// grows by step on every iteration and is compared with bound (unsigned)
// at the loop's end, the loop going on while it is below: it returns the
// iterations after the first, at most. ok is false when the counter does
// not start below the bound or the count is not small (the translation then
// runs the checked loop).
func LoopTrips(start, bound, step uint64) (more uint64, ok bool) {
	if start >= bound || bound > 1<<62 || step == 0 {
		return 0, false
	}
	more = (bound - start - 1) / step
	return more, more < 1<<31
}

// LoopTripsStepped is LoopTrips for a counter given by its first value
// compared with the bound, first: it starts at first - step, which may be
// below zero (a counter clang carries through a copy starting at 0).
func LoopTripsStepped(first, bound, step uint64) (more uint64, ok bool) {
	if bound > 1<<62 || step == 0 || step > 1<<62 || first >= bound+step {
		return 0, false
	}
	more = (bound + step - first - 1) / step
	return more, more < 1<<31
}

// Frame returns the stack of call depth d (the region r10 points to the end
// of), so that translated code can address r10-relative slots with constant
// offsets directly. d must be below MaxFrames, as CheckDepth ensures.
func (m *Machine) Frame(d int) *[StackSize]byte {
	return (*[StackSize]byte)(m.stack[d*StackSize : (d+1)*StackSize])
}

// CheckBudget fails the run with ErrBudget at insn when the budget left is
// negative. Translated code subtracts the instructions of each straight-line
// run and calls it where the interpreter charges: taken jumps, calls, exits.
func CheckBudget(left int64, insn int) {
	if left < 0 {
		panic(budgetFault(insn))
	}
}

// CheckDepth fails the run with ErrCallDepth when the call at insn, made at
// depth d, would need more than MaxFrames frames; otherwise it notes that
// the frame of depth d+1 is in use: mapped, and cleared by the next run.
func (m *Machine) CheckDepth(d int, insn int) {
	if d+1 >= MaxFrames {
		panic(depthFault(insn))
	}
	if d+1 >= m.deep {
		m.mapFrames(d + 2)
	}
}

// CallAt calls the helper or extern that the call instruction at insn
// resolves to (Bind checked that it is one) and returns r0.
func (m *Machine) CallAt(insn int, r1, r2, r3, r4, r5 uint64) uint64 {
	// Machine.call written out: this is the path of every helper call.
	in := &m.prog.insns[insn]
	if in.op != opCallFunc {
		panic(&RunError{Insn: insn, Err: errors.New("translation expects a helper or extern call")})
	}
	m.pc = insn
	v, err := m.prog.funcs[in.imm](m, r1, r2, r3, r4, r5)
	if err != nil {
		panic(m.funcError(insn, m.prog.funcNames[in.imm], err))
	}
	return v
}

// LookupAt is CallAt for a call of helper 1, map_lookup_elem: when the
// program binds the built-in helper, the common case (a hash map, a key in
// mapped memory) runs without the indirect call. Every other case, and a
// helper the host put in its place, goes through CallAt.
func (m *Machine) LookupAt(insn int, r1, r2, r3, r4, r5 uint64) uint64 {
	if in := &m.prog.insns[insn]; in.op == opCallFunc && in.imm == m.prog.lookupFn {
		if r0, ok, err := m.lookupHash(r1, r2); ok && err == nil {
			return r0
		}
	}
	return m.CallAt(insn, r1, r2, r3, r4, r5)
}

// Lookup32 is map_lookup_elem for a call whose map the translation knows,
// the program's map i (r1 holds its handle), to be a hash map of 4-byte
// keys, and whose key, in the frame, it read as k. It returns r0 and true
// for the common case, without a call: the built-in helper bound, the map
// the runtime's own and not LRU (whose lookups reorder it), and the key
// missing or its value one this run state has mapped before. Otherwise it
// returns false and has changed nothing: the translation then calls
// LookupAt, which maps the value for the next time.
func (m *Machine) Lookup32(i int, k uint32) (uint64, bool) {
	if uint(i) >= uint(len(m.values)) {
		return 0, false
	}
	v := &m.values[i]
	if v.ks != 4 {
		return 0, false
	}
	if v.direct != nil {
		s := v.direct.find4(k)
		if s < 0 {
			return 0, true
		}
		r := v.region(s)
		return Addr(r, 0), r != 0
	}
	// An array: the element is the key, which is charged for as the
	// helper charges it.
	r := v.region(int32(k))
	if m.work < 8/BytesPerUnit || r == 0 && k < v.array.spec.MaxEntries {
		return 0, false
	}
	m.work -= 8 / BytesPerUnit
	return Addr(r, 0), true // region 0, past the end: NULL
}

// Lookup64 is Lookup32 for a hash map of 8-byte keys.
func (m *Machine) Lookup64(i int, k uint64) (uint64, bool) {
	if uint(i) >= uint(len(m.values)) || m.work < 16/BytesPerUnit {
		return 0, false
	}
	v := &m.values[i]
	if v.direct == nil || v.ks != 8 {
		return 0, false // not a hash map of 8-byte keys, or an LRU one
	}
	var r0 uint64
	if s := v.direct.find8(k); s >= 0 {
		r := v.region(s)
		if r == 0 {
			return 0, false
		}
		r0 = Addr(r, 0)
	}
	// The key is hashed and compared, as lookupHash charges.
	m.work -= 16 / BytesPerUnit
	return r0, true
}

// Update32 is map_update_elem for a call whose map the translation knows,
// the program's map i, to have 4-byte keys, whose key, in the frame, it
// read as k, whose value in the frame is val and whose flags are the
// constant flags. It returns r0 and true when it has done what the
// built-in helper does, with the same work charged, the same result and
// the same map afterwards, without a call: for the runtime's own hash maps
// (LRU and per-CPU ones too: it runs the map's own update once the key is
// found) and arrays, when the program binds the built-in helper, the map
// is writable and the run holds the map's lock. Otherwise it returns
// false and has changed nothing: the translation then calls CallAt. It
// declines an update that would take memory (a larger table, a new block
// of slots: see hashMap.allocates), which the helper charges for after the
// update and which may fail, and an update the work left cannot pay for.
func (m *Machine) Update32(i int, k uint32, val []byte, flags uint64) (uint64, bool) {
	w, ok := m.writer(i, 4, true)
	if !ok {
		return 0, false
	}
	var key [4]byte
	binary.LittleEndian.PutUint32(key[:], k)
	s := int32(-1)
	if w.hash != nil {
		s = w.hash.find4(k)
	}
	return m.update(w, s, key[:], val, flags)
}

// Update64 is Update32 for a map of 8-byte keys.
func (m *Machine) Update64(i int, k uint64, val []byte, flags uint64) (uint64, bool) {
	w, ok := m.writer(i, 8, true)
	if !ok {
		return 0, false
	}
	var key [8]byte
	binary.LittleEndian.PutUint64(key[:], k)
	return m.update(w, w.hash.find8(k), key[:], val, flags)
}

// Delete32 is map_delete_elem as Update32 is map_update_elem: for a hash
// map it removes the key, as the helper does, leaving the regions that
// keep slot values mapped as they are (a value's buffer stays its slot's,
// unchanged); for an array it returns -EINVAL, as the helper does.
func (m *Machine) Delete32(i int, k uint32) (uint64, bool) {
	w, ok := m.writer(i, 4, false)
	if !ok || !m.take(8) {
		return 0, false
	}
	if h := w.hash; h != nil {
		return h.removed(h.find4(k)), true
	}
	return errno(w.array.Delete(nil)), true
}

// Delete64 is Delete32 for a hash map of 8-byte keys.
func (m *Machine) Delete64(i int, k uint64) (uint64, bool) {
	w, ok := m.writer(i, 8, false)
	if !ok || !m.take(16) {
		return 0, false
	}
	return w.hash.removed(w.hash.find8(k)), true
}

// writer returns what a direct update (or delete) of the program's map i
// of ks-byte keys needs, when it may run: the map is one it handles (see
// mapWriter) and the run holds the maps' locks, as a helper called by the
// program does (a host function, which runs with them released, gets
// false).
func (m *Machine) writer(i, ks int, update bool) (*mapWriter, bool) {
	if uint(i) >= uint(len(m.values)) || !m.held {
		return nil, false
	}
	w := &m.values[i].w
	if w.ks != ks || (update && !w.update) || (!update && !w.delete) {
		return nil, false
	}
	return w, true
}

// update is Update32 and Update64 once the key's slot s (-1: none, or
// an array) is found.
func (m *Machine) update(w *mapWriter, s int32, key, val []byte, flags uint64) (uint64, bool) {
	h := w.hash
	if len(val) != w.vs {
		return 0, false
	}
	if h != nil && h.allocates(s, flags) {
		return 0, false
	}
	// The key is hashed and compared and the value copied, as the helper
	// charges.
	if !m.take(2*len(key) + w.vs) {
		return 0, false
	}
	if h == nil {
		return errno(w.array.Update(key, val, flags)), true
	}
	if err := checkHashFlags(flags); err != nil {
		return errno(err), true
	}
	return errno(h.store(s, key, val, flags)), true
}

// take charges the work of n bytes, as ChargeBytes does, and reports
// true; when the work left cannot pay, it reports false and charges
// nothing (ChargeBytes would fail the run).
func (m *Machine) take(n int) bool {
	c := int64(n) / BytesPerUnit
	if c > m.work {
		return false
	}
	m.work -= c
	return true
}

// CallX resolves the callx at insn with target value v as the interpreter
// does: a helper id is called at once and target is -1, r0 its result; a
// function address gives the instruction index of the function to call.
func (m *Machine) CallX(insn int, v, r1, r2, r3, r4, r5 uint64) (target int, r0 uint64) {
	if t, ok := funcAddr(v); ok {
		if t >= len(m.prog.insns) || !m.prog.entry[t] {
			panic(&RunError{Insn: insn, Err: fmt.Errorf("callx to invalid function address %#x", v)})
		}
		return t, 0
	}
	if v > math.MaxInt32 {
		panic(&RunError{Insn: insn, Err: fmt.Errorf("callx to %#x: neither a function address nor a helper id", v)})
	}
	h, ok := m.prog.helpers.lookup(int32(v))
	if !ok {
		panic(&RunError{Insn: insn, Err: fmt.Errorf("callx to unknown helper %d", v)})
	}
	r0, err := m.call(insn, h.fn, h.name, r1, r2, r3, r4, r5)
	if err != nil {
		panic(err)
	}
	return -1, r0
}

// NoFunction fails the run at a callx whose target the translation has no
// function for: translations reach the functions a program calls or takes
// the address of, not computed addresses of other instructions.
func NoFunction(insn, target int) {
	panic(&RunError{Insn: insn, Err: fmt.Errorf("callx to instruction %d: not a function of the translation", target)})
}
