package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"
)

// Machine is the state of one run: memory, stack frames, budget. Helpers,
// externs and translated code receive it to reach guest memory, maps and
// the output.
type Machine struct {
	Memory
	prog *Program
	// What every run's start and end need of prog, copied at creation so
	// that they need not go through prog, and placed beside the region
	// table that begin and end write.
	closed  *atomic.Bool // prog.closed
	start   int64        // prog.budget
	low     int          // prog.stackLow
	locking bool         // prog uses SharedMaps
	// always says whether every run needs more than the common path of
	// begin and end: the program uses SharedMaps, may write a stack frame
	// or calls helpers, so that the maps' locks, the stack, the helpers'
	// work meter, regions and ring buffer reservations need handling.
	// more says whether the next begin and the end of the run in progress
	// do: always, or a call mapped a deeper frame that the next run
	// unmaps.
	always, more bool
	// settled is the length of the region table at which end has nothing
	// to release: nkept, or -1 while more is set (see settle). One
	// comparison in end then covers both.
	settled int
	// stack is 8-byte aligned for atomics on frame slots (sync/atomic
	// needs cells aligned to their width).
	_      [0]uint64
	stack  [MaxFrames * StackSize]byte
	frames [MaxFrames]frame
	regs   [256]uint64
	budget int64
	depth  int
	// deep is how many frames, from the first, the run has mapped: one
	// more than the deepest call depth it reached. Deeper frames stay
	// unmapped, so that no address reaches them; the next run clears and
	// unmaps those it mapped.
	deep int
	base unsafe.Pointer // &prog.insns[0] during exec
	// During exec the budget lives in limit and reserve (see arm): limit
	// is the address of the first instruction slot whose control transfer
	// would overrun the budget if the current straight-line run reached
	// it; reserve is what a budget too large for that form keeps back.
	limit   uintptr
	reserve int64
	pc      int
	scratch []byte
	pending []reservation
	held    bool // the run holds the locks of its program's SharedMaps
	work    int64
	// values is, by map index, what lookups of the program's hash maps
	// need: nil unless it has some.
	values []mapValues
	// tag is the owner's value for this run state (Program.SetTag).
	tag any
	// abort is what a run that does not return calls (Program.SetAbort);
	// inExec says that the interpreter is running, so that its deferred
	// end can tell such a run.
	abort  func()
	inExec bool
}

// mapValues is what a Machine knows of a hash map of its program.
type mapValues struct {
	// direct is the map when Lookup32 or Lookup64 may look it up
	// themselves: map_lookup_elem is the built-in helper and the map is
	// not LRU (whose lookups reorder it).
	direct *hashMap
	// array is the map when it is the runtime's array (or per-CPU
	// array, which has one CPU here) and map_lookup_elem is built in.
	array *arrayMap
	ks    int // direct's or array's key size
	// kept is, by slot, the region that keeps the slot's value mapped
	// (see Memory.nkept), 0 for none, for the slots below its length; far
	// holds the others. kept grows only while it takes at most
	// keptPerValue entries for each of the nkept values kept, or keptMin:
	// a run state's tables grow with the values it keeps, not with the
	// map's size.
	kept  []uint32
	far   map[int32]uint32
	nkept int
	// w is what Update32, Update64, Delete32 and Delete64 need.
	w mapWriter
}

// mapWriter is a map of the program that the direct updates and deletes
// may change themselves: the runtime's own hash map (of any kind: they run
// the code of its Update and Delete) or array, not read-only, when the
// program binds the built-in map_update_elem (update) or map_delete_elem
// (delete).
type mapWriter struct {
	hash           *hashMap
	array          *arrayMap
	ks, vs         int
	update, delete bool
}

// region returns the region that keeps slot (or element) s's value mapped,
// or 0.
func (v *mapValues) region(s int32) uint32 {
	if uint32(s) < uint32(len(v.kept)) {
		return v.kept[s]
	}
	return v.farRegion(s)
}

// farRegion is region for a slot past kept, out of line: region stays as
// small as the common case, a slot kept has.
//
//go:noinline
func (v *mapValues) farRegion(s int32) uint32 { return v.far[s] }

// Bounds of mapValues.kept.
const (
	keptMin      = 256
	keptPerValue = 8
)

// remember records that region r keeps the value of slot s mapped; n
// bounds the slots the map can have now. (An array's element past 1<<31,
// a negative s, goes to far.)
func (v *mapValues) remember(s int32, r uint32, n int) {
	v.nkept++
	if k := len(v.kept); s >= 0 && int(s) >= k {
		if l := min(n, max(int(s)+1, 2*k)); l <= max(keptMin, keptPerValue*v.nkept) {
			v.kept = append(v.kept, make([]uint32, l-k)...)
			for fs, fr := range v.far {
				if uint32(fs) < uint32(l) {
					v.kept[fs] = fr
					delete(v.far, fs)
				}
			}
		}
	}
	if s >= 0 && int(s) < len(v.kept) {
		v.kept[s] = r
		return
	}
	if v.far == nil {
		v.far = map[int32]uint32{}
	}
	v.far[s] = r
}

// frame is what a bpf-to-bpf call saves: where to return and the
// callee-saved registers.
type frame struct {
	ret            int
	r6, r7, r8, r9 uint64
}

func newMachine(p *Program) *Machine {
	m := &Machine{prog: p, closed: p.closed, start: p.budget, low: p.stackLow, locking: len(p.locks) > 0}
	m.always = m.locking || m.low < StackSize || p.calls
	m.more = m.always
	m.rd = append([][]byte(nil), p.static.rd...)
	m.wr = append([][]byte(nil), p.static.wr...)
	m.names = append([]string(nil), p.static.names...)
	if slices.ContainsFunc(p.static.own, func(b []byte) bool { return b != nil }) {
		m.own = append([][]byte(nil), p.static.own...)
	}
	m.nstatic = p.static.nstatic
	m.nkept = m.nstatic
	m.settle()
	if slices.ContainsFunc(p.maps, func(mp Map) bool { _, a := mp.(*arrayMap); _, h := mp.(*hashMap); return a || h }) {
		m.values = make([]mapValues, len(p.maps))
		for i, mp := range p.maps {
			v := &m.values[i]
			switch mp := mp.(type) {
			case *hashMap:
				if p.lookupFn >= 0 && !mp.lru {
					v.direct, v.ks = mp, mp.ks
				}
				v.w.hash, v.w.ks = mp, mp.ks
			case *arrayMap:
				if p.lookupFn >= 0 {
					v.array, v.ks = mp, 4
				}
				v.w.array, v.w.ks = mp, 4
			default:
				continue
			}
			v.w.vs = int(mp.Spec().ValueSize)
			v.w.update = p.updateBuiltin && !p.readOnly[i]
			v.w.delete = p.deleteBuiltin && !p.readOnly[i]
		}
	}
	m.mapFrames(1)
	return m
}

// mapFrames maps the stack frames of call depths below n, from deep on.
func (m *Machine) mapFrames(n int) {
	if n > 1 && !m.more {
		m.more = true
		m.settle()
	}
	for ; m.deep < n; m.deep++ {
		f := m.deep
		s := m.stack[f*StackSize : (f+1)*StackSize : (f+1)*StackSize]
		m.rd[regionStack+f], m.wr[regionStack+f] = s, s
	}
}

// Program returns the program being run.
func (m *Machine) Program() *Program { return m.prog }

// Tag returns the value SetTag gave this run state's program, nil for
// none: it tells a host function whose run calls it.
func (m *Machine) Tag() any { return m.tag }

// Insn returns the index of the instruction being executed (the call, while
// a helper runs).
func (m *Machine) Insn() int { return m.pc }

// Output is where bpf_trace_printk writes.
func (m *Machine) Output() io.Writer { return m.prog.out }

// Map resolves a map handle as the program passes it to a helper.
func (m *Machine) Map(handle uint64) (Map, error) {
	if i, ok := m.mapIndex(handle); ok {
		return m.prog.maps[i], nil
	}
	return nil, fmt.Errorf("%#x is not a map handle", handle)
}

func (m *Machine) mapIndex(handle uint64) (int, bool) {
	i := handle>>32 - tagMap
	return int(i), handle&0xffffffff == 0 && handle>>32 >= tagMap && i < uint64(len(m.prog.maps))
}

// funcAddr reports whether v is a function address (from lddw with
// PseudoFunc) and its instruction index.
func funcAddr(v uint64) (int, bool) { return int(uint32(v)), v>>32 == tagFunc }

// Budget returns the budget left by the last run. While a run goes on (in a
// helper) it is the budget the run started with, in the interpreter as in a
// translation, which both keep the running count elsewhere.
func (m *Machine) Budget() int64 { return m.budget }

// Executed returns the instruction slots the last successful run executed
// (lddw counts two; a helper call one).
func (m *Machine) Executed() uint64 { return uint64(m.start - m.budget) }

// Charge takes n units of work from what helpers and built-ins may do in
// this run, failing with ErrBudget when it runs out. Helpers whose work
// grows with their input (walking a map, formatting text) charge one unit
// per element or per BytesPerUnit bytes. Each run allows as many units as its
// instruction budget, counted apart from it because translated code keeps
// the instruction budget in a local: so a run's time stays bounded by
// twice its budget, and both engines fail at the same call.
func (m *Machine) Charge(n int64) error {
	if n < 0 || n > m.work {
		m.work = 0
		return ErrBudget
	}
	m.work -= n
	return nil
}

// lockMaps takes the locks of the program's SharedMaps, in one global order.
func (m *Machine) lockMaps() {
	for _, l := range m.prog.locks {
		l.Lock()
	}
	m.held = true
}

// unlockMaps releases the locks lockMaps took, if it holds them.
func (m *Machine) unlockMaps() {
	if !m.held {
		return
	}
	m.held = false
	for i := len(m.prog.locks) - 1; i >= 0; i-- {
		m.prog.locks[i].Unlock()
	}
}

// hostCall wraps a host function so that it runs with the maps unlocked:
// it may then use them through Go APIs that take their locks.
func hostCall(f Func) Func {
	return func(m *Machine, r1, r2, r3, r4, r5 uint64) (v uint64, err error) {
		m.Unlocked(func() { v, err = f(m, r1, r2, r3, r4, r5) })
		return v, err
	}
}

// Unlocked calls f with the locks of the program's SharedMaps released, as
// a host function runs, and takes them again after: a helper or built-in
// calls the host's code (a writer, a callback) through it, so that the
// code may use the maps through Go APIs that take their locks. What the
// helper reads of the maps and of the program's memory it reads before.
func (m *Machine) Unlocked(f func()) {
	if !m.held {
		f()
		return
	}
	m.unlockMaps()
	defer m.lockMaps()
	f()
}

// Run executes the program with ctx as its context: r1 holds the address of
// ctx (writes land in ctx), r2 its length. It returns r0 at exit.
func (p *Program) Run(ctx []byte) (uint64, error) {
	return p.m.Run(ctx)
}

// RunLen is Run with n in r2 rather than len(ctx): a context padded past
// the bytes that are real (a record shorter than its struct, zero-filled
// so that the program's typed reads stay in bounds) tells the program how
// many bytes were real.
func (p *Program) RunLen(ctx []byte, n uint64) (uint64, error) {
	return p.m.run(ctx, n)
}

// Machine returns the run state Program.Run uses.
func (p *Program) Machine() *Machine { return p.m }

// Run is Program.Run.
func (m *Machine) Run(ctx []byte) (uint64, error) {
	return m.run(ctx, uint64(len(ctx)))
}

func (m *Machine) run(ctx []byte, n uint64) (uint64, error) {
	if uint64(len(ctx)) >= maxRegionSize || m.closed.Load() {
		return 0, m.refuse(ctx)
	}
	m.begin(ctx)
	m.inExec = true
	defer m.endExec()
	r0, err := m.exec(Addr(regionContext, 0), n)
	m.inExec = false
	m.end()
	if err != nil {
		err = m.named(err)
	}
	return r0, err
}

// endExec ends an interpreted run whose exec did not return (a host
// function panicked or ended its goroutine), and then calls the abort
// function; a run whose exec returned has ended already.
func (m *Machine) endExec() {
	if m.inExec {
		m.inExec = false
		m.endAborted()
	}
}

// refuse returns why a run over ctx cannot start: the context is too
// large, or the program is closed.
func (m *Machine) refuse(ctx []byte) error {
	if uint64(len(ctx)) >= maxRegionSize {
		return fmt.Errorf("program %s: context of %d bytes is too large", m.prog.name, len(ctx))
	}
	return fmt.Errorf("program %s: %w", m.prog.name, ErrClosed)
}

// named prefixes a run's error with the program's name, when it has one.
func (m *Machine) named(err error) error {
	if m.prog.name == "" {
		return err
	}
	return fmt.Errorf("program %s: %w", m.prog.name, err)
}

// begin prepares a run over ctx: it maps the context and refills the
// budget; for a program that needs more (see Machine.more) it also takes
// the locks of the program's user-space maps, refills the helpers' work
// meter and lets the stack start as if new (see resetStack). end releases
// what the run created and the locks; call it even when the run panics
// (defer it). Both are what every run pays, whatever its program does:
// their common path reads nothing outside m, calls nothing, and inlines.
func (m *Machine) begin(ctx []byte) {
	m.rd[regionContext], m.wr[regionContext] = ctx, ctx
	m.budget = m.start
	if m.more {
		m.prepare()
	}
}

// prepare is the part of begin that only some programs need.
func (m *Machine) prepare() {
	if m.locking {
		m.lockMaps()
	}
	m.work = m.start
	m.resetStack()
	m.more = m.always
	m.settle()
}

// settle sets settled after a change of more or nkept.
func (m *Machine) settle() {
	m.settled = m.nkept
	if m.more {
		m.settled = -1
	}
}

// resetStack clears what the last run can have written of the frames it
// used and unmaps its frames but the first. What it can have written is
// the part of each frame from the program's stackLow up: nothing when
// the program writes no frame (no store, no helper), its slots' range
// when it stores only through r10, the whole frame otherwise. The rest
// of a frame is never written and stays zero, so no run can read what
// an earlier one left on the stack.
func (m *Machine) resetStack() {
	if low := m.low; low == 0 {
		clear(m.stack[:m.deep*StackSize])
	} else if low < StackSize {
		for f := range m.deep {
			clear(m.stack[f*StackSize+low : (f+1)*StackSize])
		}
	}
	for f := 1; f < m.deep; f++ {
		m.rd[regionStack+f], m.wr[regionStack+f] = nil, nil
	}
	m.deep = 1
}

// end ends a run started with begin.
func (m *Machine) end() {
	m.rd[regionContext], m.wr[regionContext] = nil, nil
	if len(m.rd) != m.settled {
		m.release()
	}
}

// release drops the regions the run created, discards the ring buffer
// reservations it left unfinished (the kernel's verifier insists on submit
// or discard; here they are discarded when the run ends) and releases
// the maps' locks.
func (m *Machine) release() {
	m.reset()
	if len(m.pending) > 0 {
		m.discard()
	}
	m.unlockMaps()
}

// discard discards the ring buffer reservations the run left unfinished.
// The maps' locks are released even if that panics: a lock left held
// would stop every later run of a program sharing the map.
func (m *Machine) discard() {
	ok := false
	defer func() {
		if !ok {
			m.unlockMaps()
		}
	}()
	for _, r := range m.pending {
		r.rb.finish(r.num, true)
	}
	clear(m.pending)
	m.pending = m.pending[:0]
	ok = true
}

// StackTop returns r10 for call depth d (0 for the entry function).
func StackTop(d int) uint64 { return Addr(uint32(regionStack+d), StackSize) }

// ContextAddr is the address of the context region (r1 at entry).
const ContextAddr = uint64(regionContext) << 32

// callFunc executes the call at index pc of the helper or extern that the
// validator numbered in its imm, with r1..r5 from the register file, and
// returns r0.
func (m *Machine) callFunc(pc int) (uint64, error) {
	m.pc = pc
	in, r := &m.prog.insns[pc], &m.regs
	// A lookup of a key in the frame, the common helper call, first: the
	// validator marked it (x the key's size, src the map's index, off the
	// key's offset from the frame's top; see directSites).
	if in.x != 0 {
		k := m.stack[m.depth*StackSize+StackSize+int(in.off):]
		var r0 uint64
		var ok bool
		if in.x == 4 {
			r0, ok = m.Lookup32(int(in.src), binary.LittleEndian.Uint32(k))
		} else {
			r0, ok = m.Lookup64(int(in.src), binary.LittleEndian.Uint64(k))
		}
		if ok {
			return r0, nil
		}
	}
	idx := in.imm
	// A map call whose map and key's place the code fixes (see
	// directSites) runs directly when the helper is the built-in one and
	// the direct function handles the case; the built-in map_lookup_elem
	// also runs without the indirect call in the common case (see
	// LookupAt).
	if d := m.prog.direct; pc < len(d) && d[pc].ks != 0 {
		if r0, ok := m.directCall(d[pc]); ok {
			return r0, nil
		}
	}
	if idx == m.prog.lookupFn {
		if r0, ok, err := m.lookupHash(r[1], r[2]); ok && err == nil {
			return r0, nil
		}
	}
	v, err := m.prog.funcs[idx](m, r[1], r[2], r[3], r[4], r[5])
	if err != nil {
		return 0, m.funcError(pc, m.prog.funcNames[idx], err)
	}
	return v, nil
}

// funcAt returns the helper or extern that the call instruction at index
// insn resolves to, with its name; ok is false when insn is not such a
// call. Bind checks the calls a translation makes with it.
func (p *Program) funcAt(insn int) (f Func, name string, ok bool) {
	if insn < 0 || insn >= len(p.insns) || p.insns[insn].op != opCallFunc {
		return nil, "", false
	}
	i := p.insns[insn].imm
	return p.funcs[i], p.funcNames[i], true
}

// call calls f as the call instruction at pc does, wrapping its error the
// way the interpreter does.
func (m *Machine) call(pc int, f Func, name string, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	m.pc = pc
	v, err := f(m, r1, r2, r3, r4, r5)
	if err != nil {
		return 0, m.funcError(pc, name, err)
	}
	return v, nil
}

func (m *Machine) funcError(pc int, name string, err error) error {
	var me *MemoryError
	if errors.As(err, &me) && me.Insn < 0 {
		me.Insn = pc
	}
	return &RunError{Insn: pc, Err: fmt.Errorf("%s: %w", name, err)}
}

// callx resolves an indirect call: a function address is a bpf-to-bpf
// call (target >= 0), a small number a helper id.
func (m *Machine) callx(pc int, v uint64, r *[256]uint64) (target int, err error) {
	if t, ok := funcAddr(v); ok {
		if t >= len(m.prog.insns) || !m.prog.entry[t] {
			return 0, &RunError{Insn: pc, Err: fmt.Errorf("callx to invalid function address %#x", v)}
		}
		return t, nil
	}
	if v > math.MaxInt32 {
		return 0, &RunError{Insn: pc, Err: fmt.Errorf("callx to %#x: neither a function address nor a helper id", v)}
	}
	h, ok := m.prog.helpers.lookup(int32(v))
	if !ok {
		return 0, &RunError{Insn: pc, Err: fmt.Errorf("callx to unknown helper %d", v)}
	}
	m.pc = pc
	r0, err := h.fn(m, r[1], r[2], r[3], r[4], r[5])
	if err != nil {
		return 0, m.funcError(pc, h.name, err)
	}
	r[0] = r0
	return -1, nil
}
