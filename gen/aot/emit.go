package aot

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
	"github.com/skelgen/skelgen/runtime"
)

const pkgBits = "math/bits"

// emitter writes the Go declarations of one translated program.
type emitter struct {
	prog *aotProgram
	opts Options

	// Per function being emitted.
	fn      *aotFunc
	used    [11]bool         // registers the body mentions
	frame   bool             // the body indexes the frame array fp
	pending int              // instruction slots run and not yet subtracted from b
	trees   map[int]*cmpTree // compare trees emitted as switches, by root
	inTree  map[int]bool     // their jumps but the roots, which the switches replace
	// phi is, per label, the pending count every arrival must bring, so
	// that the edge most often laid out as fall-through needs no
	// subtraction (see budgetPlan).
	phi map[int]int
	// fast is the hoisted loop whose fast copy is being emitted, nil
	// otherwise (see hoistLoop); backCharge is what its back edge would
	// subtract from b, which the copy defers to the loop's exits.
	fast       *hoistLoop
	backCharge int
	// opaqueMov marks the register moves emitted through runtime.Opaque
	// (see opaqueMoves).
	opaqueMov map[int]bool
	// blk is the span block whose fast copy is being emitted, nil
	// otherwise (see spanBlock).
	blk *spanBlock
	// win are the windows of the fast copy by access (see windows).
	win map[int]*spanWindow
	// views are the bases of a range loop's fast copy read through a
	// slice of one element per iteration (see rangeViews).
	views map[uint8]bool
	// jumpedTo are the hoisted loops, by head, that jumps from outside
	// enter besides the fall-through (as when a bound is clamped before
	// the loop): those jumps go to the label H<head> before the fast
	// copy, so that they may take it too.
	jumpedTo map[int]*hoistLoop
	// sites are the function's map calls whose map, key (and an
	// update's value and flags) the translation knows, by call (see
	// mapSites).
	sites map[int]runtime.MapSite
	// parts are the first instructions of the parts a large function is
	// split into (see splitPoints), nil when it is emitted whole; part is
	// the index of the part being emitted, partRegs the registers the
	// parts take and return, and entered the instructions control enters
	// a part at.
	parts    []int
	part     int
	partRegs []uint8
	entered  map[int]bool
	// copies are the budget regions copied without checks, by entry,
	// regionOf every instruction's region, and copying the entry of the
	// region whose copy is being emitted, -1 otherwise (see
	// budgetRegion).
	copies   map[int]*budgetRegion
	regionOf map[int]int
	copying  int
	// reentry is, by region entry, the guard's condition, which a copy's
	// jumps back to its entry test again at the copy's R label (see
	// labelOf); reentered notes the copy being emitted jumped there.
	reentry   map[int]string
	reentered bool
	// tail are the loads proven inside the buffer the function was given
	// (see tailLoads), tailRegions the copied regions that read them from
	// its tail: those with such a load and no call.
	tail        map[int]bool
	tailRegions map[int]bool
}

// code builds one statement from raw Go text and jen values (qualified
// identifiers, so that the file gets its imports).
func code(parts ...any) *jen.Statement {
	s := &jen.Statement{}
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			s.Id(v)
		case jen.Code:
			s.Add(v)
		default:
			panic(fmt.Sprintf("code: unexpected %T", p))
		}
	}
	return s
}

func (e *emitter) rt(name string) *jen.Statement { return jen.Qual(e.opts.RuntimePath, name) }

// leLoad is the little-endian value of the size bytes at a[k:], a an
// array pointer, spelled out byte by byte. The Go compiler merges the bytes
// into one load, as it does for binary.LittleEndian; but a call it inlines
// leaves an inline mark, a NOP executed on every access, which in a tight
// loop costs as much as the access.
func leLoad(a string, k, size int) string {
	parts := []string{fmt.Sprintf("uint64(%s[%d])", a, k)}
	for i := 1; i < size; i++ {
		parts = append(parts, fmt.Sprintf("uint64(%s[%d])<<%d", a, k+i, 8*i))
	}
	return strings.Join(parts, " | ")
}

// leStore stores the low size bytes of v at a[k:] in little-endian order.
// A register goes through runtime.PutLE32 and its siblings, one machine
// store (merged byte stores come apart when the compiler knows the
// value's upper bytes are zero). imm is v's value when it is a constant
// (v == ""), whose bytes are written out; the compiler merges them.
func leStore(e *emitter, a string, k, size int, v string, imm uint64) []jen.Code {
	if v != "" && size > 1 {
		return []jen.Code{e.rt(fmt.Sprintf("PutLE%d", size*8)).Call(code(fmt.Sprintf("%s[%d:]", a, k)), jen.Id(v))}
	}
	var out []jen.Code
	for i := range size {
		var b string
		switch {
		case v == "":
			b = fmt.Sprintf("%#x", byte(imm>>(8*i)))
		case i == 0:
			b = fmt.Sprintf("byte(%s)", v)
		default:
			b = fmt.Sprintf("byte(%s >> %d)", v, 8*i)
		}
		out = append(out, code(fmt.Sprintf("%s[%d] = %s", a, k+i, b)))
	}
	return out
}

// r names register n and notes that the body uses it.
func (e *emitter) r(n uint8) string {
	e.used[n] = true
	return fmt.Sprintf("r%d", n)
}

func (e *emitter) fnName(entry int) string { return fmt.Sprintf("%sFn%d", e.opts.Name, entry) }

func label(pc int) string { return fmt.Sprintf("L%d", pc) }

// u64 prints an immediate sign-extended to 64 bits, as an unsigned constant.
func u64(imm int32) string {
	if imm >= 0 {
		return fmt.Sprint(imm)
	}
	return fmt.Sprintf("%#x", uint64(int64(imm)))
}

// u32 prints an immediate as an unsigned 32-bit constant.
func u32(imm int32) string {
	if imm >= 0 {
		return fmt.Sprint(imm)
	}
	return fmt.Sprintf("%#x", uint32(imm))
}

// program returns the declarations as one statement, separated by blank
// lines, so that one jen.File.Add places them all.
func (e *emitter) program() *jen.Statement {
	var fns []jen.Code
	n, split := 0, false
	for _, f := range e.prog.fnList {
		fns = append(fns, e.function(f))
		n++
		if e.parts != nil {
			n, split = n+len(e.parts), true
		}
	}
	note := ""
	if split {
		note = fmt.Sprintf("translated as %d Go functions: a BPF function of more than %d instructions is split into parts, which the Go compiler builds much faster than one large function", n, splitAbove)
		if e.opts.Note != nil {
			e.opts.Note(fmt.Sprintf("program %s: %d instructions, %s", e.prog.name, e.prog.nslots, note))
		}
	}
	out := jen.Add(e.translation(note)).Line().Line().Add(e.entry())
	for _, fn := range fns {
		out.Line().Line().Add(fn)
	}
	return out
}

// translation is the function the caller hands to Program.Bind, with
// note, when not empty, as a second paragraph of its doc.
func (e *emitter) translation(note string) jen.Code {
	p := e.prog
	imms, calls := map[int]uint64{}, map[int]bool{}
	for _, f := range p.fnList {
		for _, pc := range f.body {
			in := p.insns[pc]
			if in.pseudo {
				imms[pc] = in.imm64
			}
			if in.op == runtime.OpCall && in.src != 1 {
				calls[pc] = true
			}
		}
	}
	fields := jen.Dict{
		jen.Id("Entry"): jen.Id(e.opts.Name + "Entry"),
		jen.Id("Insns"): jen.Lit(p.nslots),
	}
	if len(imms) > 0 {
		// One line an immediate.
		var list []jen.Code
		for _, pc := range sortedKeys(imms) {
			list = append(list, jen.Values(jen.Id("Insn").Op(":").Lit(pc), jen.Id("Value").Op(":").Id(fmt.Sprintf("%#x", imms[pc]))))
		}
		fields[jen.Id("Imms")] = jen.Index().Add(e.rt("Imm")).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, list...)
	}
	if len(calls) > 0 {
		var list []jen.Code
		for _, pc := range sortedKeys(calls) {
			list = append(list, jen.Lit(pc))
		}
		fields[jen.Id("Calls")] = jen.Index().Int().Values(list...)
	}
	name := e.opts.Name + "Translation"
	doc := gocomment.Commentf("%s returns the Go translation of program %q, for runtime.Program.Bind.", name, p.name)
	if note != "" {
		doc.Line().Comment("//").Line().Add(gocomment.Commentf("Its %d instructions are %s.", p.nslots, note))
	}
	return doc.Line().
		Func().Id(name).Params().Add(e.rt("Translation")).Block(
		jen.Return(e.rt("Translation").Values(fields)),
	)
}

// entry starts the program at instruction 0 in frame 0 with r1 and r2 set
// and the other registers zero, as the interpreter does.
func (e *emitter) entry() jen.Code {
	f := e.prog.funcs[0]
	var args []jen.Code
	args = append(args, jen.Id("m"), jen.Lit(0), jen.Id("b"))
	for _, r := range f.in.regs() {
		switch r {
		case 1, 2:
			args = append(args, jen.Id(fmt.Sprintf("r%d", r)))
		default:
			args = append(args, jen.Lit(0))
		}
	}
	call := jen.Id(e.fnName(0)).Call(args...)
	var body []jen.Code
	if f.out == 0 {
		body = append(body, jen.Return(call))
	} else {
		lhs := []jen.Code{jen.Id("r0"), jen.Id("left")}
		for range f.out.regs() {
			lhs = append(lhs, jen.Id("_"))
		}
		body = append(body, jen.List(lhs...).Op(":=").Add(call), jen.Return(jen.Id("r0"), jen.Id("left")))
	}
	name := e.opts.Name + "Entry"
	return gocomment.Commentf("%s is the runtime.Entry of program %q.", name, e.prog.name).Line().
		Func().Id(name).Params(
		jen.Id("m").Op("*").Add(e.rt("Machine")),
		jen.List(jen.Id("r1"), jen.Id("r2")).Uint64(),
		jen.Id("b").Int64(),
	).Params(jen.Uint64(), jen.Int64()).Block(body...)
}

func (e *emitter) function(f *aotFunc) jen.Code {
	p := e.prog
	e.fn, e.used, e.frame, e.pending, e.copying = f, [11]bool{}, false, 0, -1
	labels := p.labels(f)
	if f.body[0] != f.entry {
		labels[f.entry] = true
	}
	loops := p.findLoops(f)
	byEntry := map[int]*hoistLoop{} // rotated loops, by the jump entering them
	e.jumpedTo = map[int]*hoistLoop{}
	for _, l := range loops {
		labels[l.back+1] = true // where the fast copy leaves the loop
		if l.entry >= 0 {
			byEntry[l.entry] = l
		}
	}
	for _, pc := range f.body {
		in := p.insns[pc]
		if l := loops[in.target]; l != nil && isJump(in.op) && l.entry < 0 && !l.contains(pc) {
			e.jumpedTo[l.head] = l
		}
	}
	e.trees = p.findTrees(f, labels, loops)
	e.inTree = map[int]bool{}
	for _, t := range e.trees {
		for pc := range t.inner {
			e.inTree[pc] = true
		}
	}
	e.parts, e.part, e.entered = nil, 0, map[int]bool{}
	if len(f.body) > splitAbove {
		e.parts, e.partRegs = e.splitPoints(f, loops), p.partRegs(f)
		for _, pc := range e.parts {
			labels[pc] = true
			// A part entered at a loop's head enters it through the
			// fast copy, as a jump from outside does.
			if l := loops[pc]; l != nil && l.entry < 0 {
				e.jumpedTo[pc] = l
			}
		}
		e.entered[f.entry] = true
	}
	// Where control falls out of a region's proven copy, the checked code
	// goes on: at a label.
	e.copies, e.regionOf = p.budgetRegions(f, loops, e.parts != nil)
	e.reentry = map[int]string{}
	for _, r := range e.copies {
		for _, pc := range r.pcs {
			if in := p.insns[pc]; e.falls(in) {
				if nx := pc + in.slots; e.regionOf[nx] != r.entry || nx == r.entry {
					labels[nx] = true
				}
			}
		}
	}
	e.tail, e.tailRegions = nil, map[int]bool{}
	if len(e.copies) > 0 {
		e.tail = p.tailLoads(f)
		for x, r := range e.copies {
			reads, calls := false, false
			for _, pc := range r.pcs {
				op := p.insns[pc].op
				reads = reads || e.tail[pc]
				calls = calls || op == runtime.OpCall || op == runtime.OpCallx
			}
			if reads && !calls {
				e.tailRegions[x] = true
			}
		}
	}
	e.budgetPlan(f, labels)
	e.opaqueMoves(f)
	e.sites = p.mapSites(f)
	blocks := p.findBlocks(f, labels, loops)
	var body []jen.Code
	if f.body[0] != f.entry && e.parts == nil {
		body = append(body, e.adjust(-e.phi[f.entry])...)
		body = append(body, jen.Goto().Id(label(f.entry)))
	}
	lastLine := ""
	fell := false
	var parts []partCode
	// endPart ends the part being emitted before instruction next (-1
	// at the function's end): when control falls into next, the part
	// returns it.
	endPart := func(next int) {
		if fell {
			body = append(body, e.adjust(e.pending-e.phi[next])...)
			body = append(body, e.leavePart(next))
		}
		parts = append(parts, partCode{body: body, frame: e.frame, r10: e.used[10]})
		body, fell, lastLine = nil, false, ""
		e.frame, e.used[10] = false, false
	}
	// emitOne appends the code of the instruction at pc to *to, after
	// its source line when that starts there and lines is set. Copies (a
	// region's, a span block's fast one) repeat the checked code, whose
	// comments give the source lines; labels name the instructions
	// control comes to.
	emitOne := func(to *[]jen.Code, pc int, lines bool) {
		in := p.insns[pc]
		if line, ok := e.opts.Lines[pc]; ok && line != lastLine && lines && e.copying < 0 {
			*to = append(*to, gocomment.Line(line))
			lastLine = line
		}
		*to = append(*to, e.insn(in)...)
	}
	var g *spanBlock // the span block being emitted
	var run []int    // its instructions
	// emitRun appends the code of the instruction at pc to *to, or of the
	// span block it ends.
	emitRun := func(to *[]jen.Code, pc int) {
		if g == nil && blocks[pc] != nil {
			g, run = blocks[pc], nil
		}
		if g == nil {
			emitOne(to, pc, true)
			return
		}
		run = append(run, pc)
		if pc != g.last {
			return
		}
		// Both copies start from the same state: the pending count and
		// the last source line.
		pending, line := e.pending, lastLine
		var fast, checked []jen.Code
		e.blk = g
		for _, x := range run {
			emitOne(&fast, x, false)
		}
		e.blk, e.pending, lastLine = nil, pending, line
		for _, x := range run {
			emitOne(&checked, x, true)
		}
		*to = append(*to, e.spanBlock(g, fast, checked))
		g = nil
	}
	entered := map[int]int{} // the pending count at each copied region's entry
	for _, pc := range f.body {
		in := p.insns[pc]
		if e.inTree[pc] {
			continue
		}
		if e.part+1 < len(e.parts) && pc == e.parts[e.part+1] {
			endPart(pc)
			e.part++
		}
		if labels[pc] {
			if fell {
				body = append(body, e.adjust(e.pending-e.phi[pc])...)
			}
			e.pending = e.phi[pc]
			if l := loops[pc]; l != nil && l.entry < 0 {
				if e.jumpedTo[pc] != nil {
					body = append(body, jen.Id(fmt.Sprintf("H%d", pc)).Op(":"))
				}
				body = append(body, e.fastLoop(l, labels))
			}
			body = append(body, jen.Id(label(pc)).Op(":"))
		}
		if r := e.copies[pc]; r != nil {
			entered[pc] = e.pending
			cond := fmt.Sprintf("%s >= %d", offset("b", -int64(e.pending)), r.longest)
			doc := gocomment.Commentf("When the budget covers the longest path from here to where control leaves instructions %s, run their copy that checks none.", joinInts(slices.Clone(r.pcs)))
			if e.tailRegions[pc] {
				cond += " && a2 <= uint64(len(tail))"
				doc = gocomment.Commentf("When the budget covers the longest path from here to where control leaves instructions %s, and the a2 bytes from a1 lie in a1's region, run their copy that checks no budget and reads the loads proven inside those bytes from the region's tail.", joinInts(slices.Clone(r.pcs)))
			}
			e.reentry[pc] = cond
			body = append(body, doc.Line().If(code(cond)).Block(jen.Goto().Id(proven(pc))))
		}
		fell = e.falls(in)
		if l := byEntry[pc]; l != nil {
			// The jump into a rotated loop: the fast copy goes after its
			// budget adjustment and check, before its goto.
			var ja []jen.Code
			emitOne(&ja, pc, true)
			body = append(body, ja[:len(ja)-1]...)
			body = append(body, e.fastLoop(l, labels), ja[len(ja)-1])
			continue
		}
		emitRun(&body, pc)
	}
	// The proven copies, entered only by their guards' gotos, left only
	// by jumps and returns.
	for _, x := range sortedKeys(e.copies) {
		r := e.copies[x]
		e.copying, lastLine, fell, e.reentered = x, "", false, false
		start := len(body)
		for _, pc := range r.pcs {
			in := p.insns[pc]
			if e.inTree[pc] {
				continue
			}
			switch {
			case pc == x:
				// Entered from the guard only: falling into it from
				// the region is a back edge, which goes to the guard.
				e.pending = entered[x]
				body = append(body, jen.Id(proven(pc)).Op(":"))
			case labels[pc]:
				if fell {
					body = append(body, e.adjust(e.pending-e.phi[pc])...)
				}
				e.pending = e.phi[pc]
				body = append(body, jen.Id(proven(pc)).Op(":"))
			}
			fell = e.falls(in)
			emitRun(&body, pc)
			if nx := pc + in.slots; fell && (e.regionOf[nx] != x || nx == x) {
				body = append(body, e.adjust(e.pending-e.phi[nx])...)
				body = append(body, e.goTo(nx, e.labelOf(nx)))
				fell = false
			}
		}
		if e.reentered {
			// Back at the entry, the copy decides again, in place, rather
			// than through the checked code's guard.
			again := []jen.Code{jen.Id(reentry(x)).Op(":"), jen.If(code(e.reentry[x])).Block(jen.Goto().Id(proven(x))), jen.Goto().Id(label(x))}
			body = slices.Insert(body, start, again...)
		}
		e.copying = -1
	}
	if e.parts != nil {
		endPart(-1)
		return e.splitFunction(f, parts)
	}

	var decl []jen.Code
	var locals []jen.Code
	for r := uint8(0); r < 10; r++ {
		if e.used[r] && !f.in.has(r) {
			locals = append(locals, jen.Id(fmt.Sprintf("r%d", r)))
		}
	}
	if len(locals) > 0 {
		decl = append(decl, jen.Var().List(locals...).Uint64())
	}
	if e.frame {
		decl = append(decl, jen.Id("fp").Op(":=").Id("m").Dot("Frame").Call(jen.Id("d")))
	}
	if e.used[10] {
		decl = append(decl, jen.Id("r10").Op(":=").Add(e.rt("StackTop")).Call(jen.Id("d")))
	}
	if len(e.tailRegions) > 0 {
		decl = append(decl, gocomment.Comment("a1 and a2 are the buffer the function was given, tail its region's bytes from a1 on (taken again after each call)."),
			code("a1, a2 := r1, r2"), code("tail := m.ReadTail(a1)"))
	}

	return e.signature(f, "").Block(append(decl, body...)...)
}

// signature is the doc comment and signature of f's Go function, with
// more appended to the doc's first sentence.
func (e *emitter) signature(f *aotFunc, more string) *jen.Statement {
	p := e.prog
	params := []jen.Code{jen.Id("m").Op("*").Add(e.rt("Machine")), jen.Id("d").Int(), jen.Id("b").Int64()}
	if in := f.in.regs(); len(in) > 0 {
		params = append(params, jen.List(regIds(in)...).Uint64())
	}
	results := []jen.Code{jen.Uint64(), jen.Int64()}
	for range f.out.regs() {
		results = append(results, jen.Uint64())
	}
	what := fmt.Sprintf("the function at instruction %d", f.entry)
	if sym := p.syms[f.entry]; sym != "" {
		what = fmt.Sprintf("function %s (instruction %d)", sym, f.entry)
	}
	doc := fmt.Sprintf("%s is %s of program %q, run at call depth d with budget b; it returns r0 and the budget left", e.fnName(f.entry), what, p.name)
	if f.out != 0 {
		doc += fmt.Sprintf(", then r%v for callers that read them after the call", f.out.regs())
	}
	return gocomment.Comment(doc + "." + more).Line().
		Func().Id(e.fnName(f.entry)).Params(params...).Params(results...)
}

// regIds are the identifiers of registers rs.
func regIds(rs []uint8) []jen.Code {
	var ids []jen.Code
	for _, r := range rs {
		ids = append(ids, jen.Id(fmt.Sprintf("r%d", r)))
	}
	return ids
}

// falls reports whether control can go on to the next instruction.
func falls(in *aotInsn) bool {
	return in.op != runtime.OpJa && in.op != runtime.OpJa32 && in.op != runtime.OpExit
}

// falls is falls for the code being emitted, where a compare tree's
// switch jumps on every path.
func (e *emitter) falls(in *aotInsn) bool { return falls(in) && e.trees[in.pc] == nil }

// budgetPlan decides where f subtracts the budget.
//
// b always equals the interpreter's budget plus the pending slots of the
// current straight-line run. Each label L has a fixed pending count phi(L)
// (what its likely most taken edge brings, see below);
// an edge arriving with a different count subtracts the difference. The
// translation checks the budget where the interpreter does, at every
// taken jump, call and exit, so that running out fails the run at the
// same instruction.
func (e *emitter) budgetPlan(f *aotFunc, labels map[int]bool) {
	p := e.prog
	e.phi = map[int]int{}
	// An edge that arrives with a different count than its label's pays
	// the difference on its way. On a fall-through or an unconditional
	// jump that is one subtraction in straight-line code; on a
	// conditional jump it needs a block of its own, which the Go compiler
	// places on the fall-through path, so that the other way becomes a
	// taken jump. So a label takes the count of the first conditional
	// forward jump to it (Log2's "if (v >> k) { v >>= k; r += k; }" then
	// subtracts 2 in the body and jumps over it with no block between),
	// else of the first unconditional forward jump (the end of an if's
	// then-branch, jumping over the else), else of what falls into it,
	// or 0 when only backward jumps reach it.
	cond, ja := map[int]int{}, map[int]int{}
	pending, fell := 0, false
	for _, pc := range f.body {
		in := p.insns[pc]
		if labels[pc] {
			if n, ok := cond[pc]; ok {
				pending = n
			} else if n, ok := ja[pc]; ok {
				pending = n
			} else if !fell {
				pending = 0
			}
			e.phi[pc] = pending
		}
		pending += in.slots
		if t := in.target; t > pc && (isJump(in.op)) {
			m := ja
			if isCondJump(in.op) {
				m = cond
			}
			if _, ok := m[t]; !ok {
				m[t] = pending
			}
		}
		if in.op == runtime.OpCall && in.src == 1 {
			pending = 0
		}
		fell = falls(in)
	}
}

// opaqueMoves decides which moves between registers f passes through
// runtime.Opaque, so that the two registers hold different Go values.
//
// After "r6 = r1", with r1 still live, both locals are one SSA value. When
// that value enters a loop as one register, the loop writes the other, and
// a call in the loop makes the compiler spill it, go1.26's register
// allocator can lose track of it on the loop's back edge and fail with an
// internal compiler error ("can't find source for" an edge), as clang's
// "mov %r6, %r1" at a function's entry followed by a loop of helper calls
// can make it do. So a move whose source stays live goes through Opaque,
// a load and an xor, where that costs little: outside every loop, and in
// loops that call a function or helper anyway. Moves in loops without
// calls, the hot ones, stay plain copies.
func (e *emitter) opaqueMoves(f *aotFunc) {
	p := e.prog
	e.opaqueMov = map[int]bool{}
	// calls[i] counts the calls among f.body[:i]; a loop (a backward
	// jump's span) without one adds one to hot[i] for each of its
	// instructions f.body[i], through the differences of hot.
	calls := make([]int, len(f.body)+1)
	for i, pc := range f.body {
		calls[i+1] = calls[i]
		if op := p.insns[pc].op; op == runtime.OpCall || op == runtime.OpCallx {
			calls[i+1]++
		}
	}
	hot := make([]int, len(f.body)+1)
	for i, pc := range f.body {
		if in := p.insns[pc]; isJump(in.op) && in.target <= pc {
			from := sort.SearchInts(f.body, in.target)
			if calls[i+1] == calls[from] {
				hot[from]++
				hot[i+1]--
			}
		}
	}
	n := 0
	for i, pc := range f.body {
		n += hot[i]
		in := p.insns[pc]
		if in.op != runtime.OpMovReg || in.off != 0 || in.src == in.dst || !e.live(pc, in.src) {
			continue
		}
		e.opaqueMov[pc] = n == 0
	}
}

// adjust subtracts n from b (adds for negative n).
func (e *emitter) adjust(n int) []jen.Code {
	switch {
	case n > 0:
		return []jen.Code{code(fmt.Sprintf("b -= %d", n))}
	case n < 0:
		return []jen.Code{code(fmt.Sprintf("b += %d", -n))}
	}
	return nil
}

// checkAt checks the budget at pc when b holds extra slots of a run still
// to be charged.
func (e *emitter) checkAt(pc, extra int) jen.Code {
	arg := jen.Id("b")
	if extra != 0 {
		arg = jen.Id(fmt.Sprintf("b-%d", extra))
	}
	return e.rt("CheckBudget").Call(arg, jen.Lit(pc))
}

// charge subtracts the whole pending run and checks the budget, as the
// interpreter does at a call or exit (but where the budget is proven).
func (e *emitter) charge(pc int) []jen.Code {
	if e.copying >= 0 {
		return e.adjust(e.pending)
	}
	return append(e.adjust(e.pending), e.checkAt(pc, 0))
}

// jumpTo is a taken jump from pc: bring b to the target's pending count,
// check the budget, go.
//
// Its goto is always the last statement: the jump into a rotated loop
// places the loop's fast copy just before it (see function).
func (e *emitter) jumpTo(pc, target int) []jen.Code {
	phi := e.phi[target]
	l := e.fast
	if l != nil && pc == l.back {
		return []jen.Code{e.goTo(target, e.labelOf(target))}
	}
	stmts := e.adjust(e.pending - phi)
	if l != nil && !l.contains(target) {
		stmts = append(stmts, e.backEdges(l, l.pos[pc] < l.pos[l.addAt])...)
	}
	if e.fast == nil && e.copying < 0 {
		stmts = append(stmts, e.checkAt(pc, phi))
	}
	if l := e.jumpedTo[target]; l != nil && !l.contains(pc) {
		// Into a hoisted loop from outside: through its fast copy.
		return append(stmts, e.goTo(target, fmt.Sprintf("H%d", target)))
	}
	return append(stmts, e.goTo(target, e.labelOf(target)))
}

// labelOf names the label of target as jumps in the code being emitted
// reach it: in the fast copy of a loop, the copy's own labels; in a
// region's proven copy, the copy's own labels but its entry's, where the
// guard decides again.
func (e *emitter) labelOf(target int) string {
	if l := e.fast; l != nil && l.contains(target) {
		return fmt.Sprintf("F%d", target)
	}
	if x := e.copying; x >= 0 && e.regionOf[target] == x {
		if target == x {
			e.reentered = true
			return reentry(x)
		}
		return proven(target)
	}
	return label(target)
}

// fastLoop emits the fast copy of the hoisted loop l, placed where control
// falls into its head, with b already brought to the head's pending count:
// when the counter bounds the iterations, every base's span lies in its
// region and the budget covers every iteration the counter allows, the
// copy runs the loop with those accesses and the budget unchecked (b still
// counts; the back edge's share is charged at each way out, see
// backEdges, or before the loop when the counter's test is its only way
// out) and leaves it for the instruction after the back edge or an
// exit's target; otherwise control goes on into the checked loop.
func (e *emitter) fastLoop(l *hoistLoop, labels map[int]bool) jen.Code {
	p := e.prog
	e.fast = l
	e.views = e.rangeViews(l)
	var body []jen.Code
	// o<r> counts how far a stepping register r went since the head (the
	// counter's count is its distance from c0).
	counts := map[int]*hoistBase{} // by where the counted register steps
	for _, b := range l.bases {
		if b.by >= 0 && uint8(b.by) != l.counter && counts[b.byAt] == nil && !e.views[b.reg] {
			counts[b.byAt] = b
			body = append(body, code(fmt.Sprintf("var o%d uint64", b.by)))
		}
	}
	for _, r := range l.consts {
		body = append(body, code(e.r(r)+" = ", e.rt("Opaque"), "("+e.r(r)+")"))
	}
	e.backCharge = e.backEdgeCharge(l)
	// A loop whose only way out is the counter's test runs j+1
	// iterations: its back edges are charged here, once.
	if l.single && e.backCharge != 0 {
		body = append(body, code(fmt.Sprintf("b -= %d * int64(j)", e.backCharge)))
	}
	if !l.single && e.backCharge != 0 || l.countsByCounter(e.views) {
		body = append(body, code(fmt.Sprintf("c0 := %s", e.start(l))))
	}
	if e.views != nil {
		body = append(body, code("n := int(j + 1)"))
		for _, b := range l.bases {
			if e.views[b.reg] {
				body = append(body, code(fmt.Sprintf("vv%d := ", b.reg), e.rt("Views"), fmt.Sprintf("[[%d]byte](fv%d, n)", b.step, b.reg)))
			}
		}
	}
	made := map[string]bool{}
	for _, w := range e.windows(l, labels) {
		body = append(body, code(fmt.Sprintf("var %s *[%d]byte", w.name, w.hi-w.lo)))
		if v := w.maker(); !made[v] {
			made[v] = true
			body = append(body, code(fmt.Sprintf("%s := ", v), e.rt("WindowOf"), fmt.Sprintf("[[%d]byte](fv%d)", w.hi-w.lo, w.base)))
		}
	}
	next := l.back + p.insns[l.back].slots
	// leave is the way out when the conditional back edge is not taken.
	leave := func() []jen.Code {
		out := e.adjust(e.pending - e.phi[next])
		out = append(out, e.backEdges(l, false)...)
		return append(out, e.goTo(next, label(next)))
	}
	var to *[]jen.Code // where emit appends
	emit := func(pc int) {
		*to = append(*to, e.insn(p.insns[pc])...)
		if b := counts[pc]; b != nil {
			// A base's step is its stepping register's.
			*to = append(*to, code(addTo(fmt.Sprintf("o%d", b.by), b.step)))
		}
	}
	// apart: an instruction that falls into one placed elsewhere in the
	// order (a loop with arms, see withArms) goes there.
	apart := func(pc int) bool {
		in := p.insns[pc]
		nx := pc + in.slots
		if pc == l.back || !e.falls(in) || l.order[l.pos[pc]+1] == nx {
			return false
		}
		*to = append(*to, e.adjust(e.pending-e.phi[nx])...)
		*to = append(*to, e.goTo(nx, e.labelOf(nx)))
		return true
	}
	if e.views != nil {
		// A range loop: j+1 iterations, its back edge's test left out.
		var loop []jen.Code
		to = &loop
		e.pending = e.phi[l.head]
		fell := false
		for _, pc := range l.order[:len(l.order)-1] {
			if e.inTree[pc] {
				continue
			}
			if labels[pc] && pc != l.head {
				if fell {
					loop = append(loop, e.adjust(e.pending-e.phi[pc])...)
				}
				loop = append(loop, jen.Id(e.labelOf(pc)).Op(":"))
				e.pending = e.phi[pc]
			}
			fell = e.falls(p.insns[pc])
			emit(pc)
			fell = fell && !apart(pc)
		}
		if labels[l.back] {
			if fell {
				loop = append(loop, e.adjust(e.pending-e.phi[l.back])...)
			}
			loop = append(loop, jen.Id(e.labelOf(l.back)).Op(":"))
			e.pending = e.phi[l.back]
		}
		e.pending += p.insns[l.back].slots
		body = append(body, jen.For(code("k := range n")).Block(loop...))
		body = append(body, leave()...)
		return e.fastLoopGuard(l, body)
	}
	to = &body
	fell, unrolled := false, e.unrollable(l, labels)
	for _, pc := range l.order {
		in := p.insns[pc]
		if e.inTree[pc] {
			continue
		}
		if labels[pc] {
			if fell {
				body = append(body, e.adjust(e.pending-e.phi[pc])...)
			}
			body = append(body, jen.Id(e.labelOf(pc)).Op(":"))
			e.pending = e.phi[pc]
		}
		if unrolled && pc == l.back {
			// The first of two iterations per pass: its test leaves when
			// the loop ends, and the second runs the body again.
			e.pending += in.slots
			body = append(body, jen.If(code("!("+e.cond(in)+")")).Block(leave()...))
			e.pending = e.phi[l.head]
			for _, x := range l.order[:len(l.order)-1] {
				emit(x)
			}
		}
		fell = e.falls(in)
		emit(pc)
		fell = fell && !apart(pc)
	}
	if fell { // a conditional back edge: the loop ends when it is not taken
		body = append(body, leave()...)
	}
	return e.fastLoopGuard(l, body)
}

// fastLoopGuard wraps the fast copy of l in the checks that let it run.
func (e *emitter) fastLoopGuard(l *hoistLoop, body []jen.Code) jen.Code {
	p := e.prog
	e.fast, e.win, e.views = nil, nil, nil
	e.pending = e.phi[l.head]
	// The checks, innermost last.
	for i := len(l.bases) - 1; i >= 0; i-- {
		b := l.bases[i]
		start, n := e.baseStart(l, b), fmt.Sprintf("%d", b.hi-b.lo)
		switch {
		case b.step > 0:
			n += fmt.Sprintf("+%d*j", b.step)
		case b.step < 0:
			// A base counting down: its span ends where it starts.
			start += fmt.Sprintf("-%d*j", -b.step)
			n += fmt.Sprintf("+%d*j", -b.step)
		}
		body = []jen.Code{jen.If(code(fmt.Sprintf("fv%d, ok := m.SpanAt(%s, %s, %v); ok", b.reg, start, n, b.write))).Block(body...)}
	}
	bound := l.bound
	if l.inclusive {
		bound += "+1"
	}
	slots := 0
	for _, pc := range l.order {
		slots += p.insns[pc].slots
	}
	// The budget left at the head covers every slot the loop can run, so
	// no check inside it can fail and the copy leaves them out.
	body = []jen.Code{jen.If(code(fmt.Sprintf("%s >= int64(j+1)*%d", offset("b", -int64(e.phi[l.head])), slots))).Block(body...)}
	for i := len(l.exits) - 1; i >= 0; i-- {
		x := l.exits[i]
		xb := x.bound
		if x.inclusive {
			xb += "+1"
		}
		body = append([]jen.Code{jen.If(code("k, ok := ", e.tripsUp(l, 0, xb), "; ok && k < j")).Block(code("j = k"))}, body...)
	}
	what := fmt.Sprintf("Instructions %d to %d are", l.head, l.back)
	if lo, hi := l.arms(); lo >= 0 {
		what = fmt.Sprintf("Instructions %d to %d, with their arms at %d to %d, are", l.head, l.back, lo, hi)
	}
	if l.entry >= 0 {
		// A rotated loop: its body, then its latch.
		what = fmt.Sprintf("Instructions %d to %d, then %d to %d, are", l.head, l.order[l.latch-1], l.order[l.latch], l.back)
	}
	doc := fmt.Sprintf("%s a counted loop: when the budget lasts, run a copy that does not check it.", what)
	if len(l.bases) > 0 {
		doc = fmt.Sprintf("%s a counted loop: when its accesses through %s stay in their regions and the budget lasts, run a copy that checks neither.", what, e.baseNames(l))
	}
	guard := "ok"
	// A shadow steps with its counter only if it starts equal to it.
	var shadows []int
	for x := range l.shadows {
		shadows = append(shadows, int(x))
	}
	slices.Sort(shadows)
	for _, x := range shadows {
		guard += fmt.Sprintf(" && %s == %s", e.r(uint8(x)), e.r(l.shadows[uint8(x)].of))
	}
	// The trip count, from the counter's start up to the bound, or for a
	// counter counting down (an exact loop), from the bound up to it.
	from, to, step := offset(e.start(l), l.testOff), bound, l.step
	trips := e.tripsUp(l, l.testOff, bound)
	if step < 0 {
		from, to, step = bound, e.start(l), -step
		trips = code(e.rt("LoopTrips"), fmt.Sprintf("(%s, %s, %d)", from, to, step))
	}
	if l.exact && step != 1 {
		// The counter must meet the bound, not step over it.
		guard += fmt.Sprintf(" && (%s-%s)%%%d == 0", to, from, step) // exact loops count by the counter itself
	}
	return gocomment.Comment(doc).Line().
		If(code("j, ok := ", trips, "; "+guard)).Block(body...)
}

// tripsUp is the call of runtime.LoopTrips bounding the iterations of l,
// its counter counting up from its start plus off to the bound to. A
// counter carried through a copy (never tested with an offset) starts at
// the copy less the step, which may be below zero: LoopTripsStepped takes
// the copy itself.
func (e *emitter) tripsUp(l *hoistLoop, off int64, to string) jen.Code {
	if l.startOff != 0 && off == 0 {
		return code(e.rt("LoopTripsStepped"), fmt.Sprintf("(%s, %s, %d)", e.r(l.start), to, l.step))
	}
	return code(e.rt("LoopTrips"), fmt.Sprintf("(%s, %s, %d)", offset(e.start(l), off), to, l.step))
}

// rangeViews returns the bases of l that its fast copy reads through a
// slice with one element per iteration (runtime.Views), or nil when the
// copy is not a range loop. A range loop is a Go for loop over the j+1
// iterations the fast copy allows, in place of the back edge's test, so
// that Go itself proves each element index in range and checks nothing
// per access. Its jumps out of the loop stay in its body as they are. The
// loop leaves at the first of: the back edge's test failing, which happens
// after exactly j+1 iterations when its bound is the least of the
// counter's bounds (j is the least of their trip counts); a test of the
// counter against another bound, which then fires in iteration j; or any
// other jump out, earlier. So the range's end stands for the back edge's
// test exactly. A base qualifies when it steps by a positive stride and
// its accesses in one iteration cover exactly one stride: element k is
// then what iteration k accesses, and j+1 elements are exactly the span
// checked for it. Other bases keep their windows.
func (e *emitter) rangeViews(l *hoistLoop) map[uint8]bool {
	if !falls(e.prog.insns[l.back]) {
		return nil
	}
	var views map[uint8]bool
	for _, b := range l.bases {
		if b.step > 0 && b.hi-b.lo == b.step {
			if views == nil {
				views = map[uint8]bool{}
			}
			views[b.reg] = true
		}
	}
	return views
}

// unrollable reports whether the fast copy of l runs two iterations per
// pass: a loop of at most maxUnrolled instructions whose body is
// straight-line code (no label but the head, no jump but its conditional
// back edge). Each iteration keeps its own test, so the copy runs the same
// iterations in the same order; a tight loop then spends half as many
// back edges, and is less at the mercy of where its code lies (a loop of
// a few instructions straddling a 32-byte block runs at half speed on
// some x86 processors).
func (e *emitter) unrollable(l *hoistLoop, labels map[int]bool) bool {
	p := e.prog
	n := 0
	for _, pc := range l.order {
		in := p.insns[pc]
		jump := in.class() == runtime.ClassJMP || in.class() == runtime.ClassJMP32
		if n++; n > maxUnrolled || pc != l.head && labels[pc] || pc != l.back && jump {
			return false
		}
	}
	return falls(p.insns[l.back])
}

// maxUnrolled bounds the loops whose fast copy is unrolled.
const maxUnrolled = 12

// spanBlock is the code of the span block g from the code of its two
// copies: the fast one, its accesses through g's base indexing one view of
// the span, when runtime.Memory.BlockSpan gives the span; the checked one
// otherwise.
func (e *emitter) spanBlock(g *spanBlock, fast, checked []jen.Code) jen.Code {
	n := g.hi - g.lo
	view := code(g.view()+" := ", e.rt("WindowOf"), fmt.Sprintf("[[%d]byte](s%d).At(0)", n, g.first))
	return gocomment.Commentf("Instructions %d to %d access %s at constant offsets: when the span they reach is in its region, run a copy that checks it once.", g.first, g.last, e.r(g.base)).Line().
		If(code(fmt.Sprintf("s%d, ok := m.BlockSpan(%s, %d, %v); ok", g.first, offset(e.r(g.base), g.lo), n, g.write))).Block(append([]jen.Code{view}, fast...)...).
		Else().Block(checked...)
}

// A spanWindow is a run of accesses in the fast copy of a loop through one
// hoisted base, with no label between them and the base unchanged: the
// first takes the window [base+lo, base+hi) of the base's span (one
// check) and all of them access it at constant offsets.
type spanWindow struct {
	name   string
	first  int
	base   uint8
	lo, hi int64
}

// maker names the runtime.Window, made before the loop, that w's views
// come from: one per base register and size.
func (w *spanWindow) maker() string {
	return fmt.Sprintf("v%dx%d", w.base, w.hi-w.lo)
}

// windows groups the fast accesses of l into windows (by access in e.win)
// and returns them; a single access has a window of its own.
func (e *emitter) windows(l *hoistLoop, labels map[int]bool) []*spanWindow {
	p := e.prog
	e.win = map[int]*spanWindow{}
	var order []*spanWindow
	cur := map[uint8]*spanWindow{}
	for _, pc := range l.order {
		in := p.insns[pc]
		if labels[pc] {
			cur = map[uint8]*spanWindow{}
		}
		if l.fast[pc] {
			base := in.dst
			if in.class() == runtime.ClassLDX {
				base = in.src
			}
			if e.views[base] {
				continue // read through its view
			}
			lo := int64(in.off)
			hi := lo + int64(sizeOf(in.op))
			w := cur[base]
			if w == nil {
				w = &spanWindow{name: fmt.Sprintf("w%d", pc), first: pc, base: base, lo: lo, hi: hi}
				cur[base] = w
				order = append(order, w)
			}
			w.lo, w.hi = min(w.lo, lo), max(w.hi, hi)
			e.win[pc] = w
		}
		for _, r := range p.effect(e.fn, in).def.regs() {
			delete(cur, r)
		}
	}
	return order
}

// windowAccess returns, for a fast access in a window, the statements to
// run before it (taking the window at its first access) and the window's
// name and the access's offset in it; ok is false for other accesses.
func (e *emitter) windowAccess(in *aotInsn, base uint8) (pre []jen.Code, name string, k int64, ok bool) {
	if g := e.blk; g != nil && g.fast[in.pc] {
		return nil, g.view(), int64(in.off) - g.lo, true
	}
	if e.fastAccess(in.pc) && e.views[base] {
		// Iteration k's element of the base's view (see rangeViews).
		return nil, fmt.Sprintf("vv%d[k]", base), e.fast.at[in.pc] - e.fast.base(base).lo, true
	}
	w := e.win[in.pc]
	if w == nil || !e.fastAccess(in.pc) {
		return nil, "", 0, false
	}
	if w.first == in.pc {
		// The window's place in the span: how far the base went since the
		// head (see hoistBase.by), plus the window's offset from the
		// span's.
		b := e.fast.base(base)
		at := fmt.Sprint(w.lo - b.lo)
		switch {
		case b.by >= 0 && uint8(b.by) == e.fast.counter:
			at = offset(e.r(e.fast.counter)+"-c0", w.lo-b.lo-e.fast.lag[in.pc])
		case b.by >= 0:
			at = offset(fmt.Sprintf("o%d", b.by), w.lo-b.lo-e.fast.lag[in.pc])
		case b.masked:
			// The masked index: the base less the register it was added to.
			at = offset(e.r(base)+"-"+e.r(b.from[0]), w.lo-b.lo)
		}
		if b.step < 0 {
			// Its span starts j steps below where it starts (the count
			// goes below zero).
			at += fmt.Sprintf("+%d*j", -b.step)
		}
		pre = []jen.Code{code(fmt.Sprintf("%s = %s.At(%s)", w.name, w.maker(), at))}
	}
	return pre, w.name, int64(in.off) - w.lo, true
}

// backEdgeCharge is what the back edge of l subtracts from b each time it
// is taken: every path through the loop reaches it with the same pending
// count (the phi of the last label in the loop, the head at least, plus
// the slots from there on).
func (e *emitter) backEdgeCharge(l *hoistLoop) int {
	last := 0
	for i, pc := range l.order {
		if _, ok := e.phi[pc]; ok {
			last = i
		}
	}
	n := e.phi[l.order[last]]
	for _, pc := range l.order[last:] {
		n += e.prog.insns[pc].slots
	}
	return n - e.phi[l.head]
}

// start is the Go expression of l's counter at the head, before it steps.
func (e *emitter) start(l *hoistLoop) string {
	return offset(e.r(l.start), -l.startOff)
}

// backEdges charges, as the fast copy of l leaves the loop, its back edge
// for every iteration but the last: the counter went from c0 by one step
// per iteration, except in the last when it leaves before the add
// (beforeAdd).
func (e *emitter) backEdges(l *hoistLoop, beforeAdd bool) []jen.Code {
	if e.backCharge == 0 || l.single {
		return nil
	}
	n := fmt.Sprintf("int64((%s-c0)/%d)", e.r(l.counter), l.step)
	if l.step < 0 {
		n = fmt.Sprintf("int64((c0-%s)/%d)", e.r(l.counter), -l.step)
	}
	if !beforeAdd {
		n += " - 1"
	}
	return []jen.Code{code(fmt.Sprintf("b -= %d * (%s)", e.backCharge, n))}
}

func (e *emitter) baseNames(l *hoistLoop) string {
	var names []string
	for _, b := range l.bases {
		names = append(names, fmt.Sprintf("r%d", b.reg))
	}
	return strings.Join(names, ", ")
}

// baseStart is the address where the span of base b of loop l starts, as
// computed at the loop's head, where the counter is taken as it is before
// it steps (e.start: for a counter carried through a copy, the register
// itself holds nothing the loop reads yet).
func (e *emitter) baseStart(l *hoistLoop, b *hoistBase) string {
	var parts []string
	for _, r := range b.from {
		if r == l.counter && l.startOff != 0 {
			parts = append(parts, "("+e.start(l)+")")
			continue
		}
		parts = append(parts, e.r(r))
	}
	return offset(strings.Join(parts, "+"), b.lo)
}

// addTo writes the statement v += n.
func addTo(v string, n int64) string {
	if n < 0 {
		return fmt.Sprintf("%s -= %d", v, -n)
	}
	return fmt.Sprintf("%s += %d", v, n)
}

// offset writes r+off.
func offset(r string, off int64) string {
	switch {
	case off > 0:
		return fmt.Sprintf("%s+%d", r, off)
	case off < 0:
		return fmt.Sprintf("%s-%d", r, -off)
	}
	return r
}

// fastAccess reports whether the fast copy of a loop is being emitted and
// its spans cover the access at pc.
func (e *emitter) fastAccess(pc int) bool { return e.fast != nil && e.fast.fast[pc] }

// live reports whether the value instruction pc leaves in register n is
// read later.
func (e *emitter) live(pc int, n uint8) bool { return e.fn.liveOut[pc].has(n) }

func (e *emitter) insn(in *aotInsn) []jen.Code {
	e.pending += in.slots
	switch in.class() {
	case runtime.ClassALU, runtime.ClassALU64:
		if !e.live(in.pc, in.dst) {
			return nil
		}
		if in.class() == runtime.ClassALU64 {
			return e.alu64(in)
		}
		return e.alu32(in)
	case runtime.ClassLD:
		if !e.live(in.pc, in.dst) {
			return nil
		}
		return []jen.Code{code(fmt.Sprintf("%s = %#x", e.r(in.dst), in.imm64))}
	case runtime.ClassLDX:
		return e.load(in)
	case runtime.ClassST, runtime.ClassSTX:
		if isAtomic(in.op) {
			return e.atomic(in)
		}
		return e.store(in)
	}
	stmts := e.jump(in)
	if len(e.tailRegions) > 0 && (in.op == runtime.OpCall || in.op == runtime.OpCallx) {
		stmts = append(stmts, code("tail = m.ReadTail(a1)"))
	}
	return stmts
}

func (e *emitter) alu64(in *aotInsn) []jen.Code {
	d := e.r(in.dst)
	x := in.op&8 != 0
	var s string
	if x {
		s = e.r(in.src)
	}
	set := func(format string, args ...any) []jen.Code {
		return []jen.Code{code(d + " = " + fmt.Sprintf(format, args...))}
	}
	op := map[runtime.Opcode]string{runtime.OpAddImm: "+=", runtime.OpSubImm: "-=", runtime.OpMulImm: "*=", runtime.OpOrImm: "|=", runtime.OpAndImm: "&=", runtime.OpXorImm: "^="}
	code8 := aluOp(in.op)
	if o, ok := op[code8]; ok {
		switch {
		case x:
			return []jen.Code{code(fmt.Sprintf("%s %s %s", d, o, s))}
		case code8 == runtime.OpAddImm && in.imm < 0:
			return []jen.Code{code(fmt.Sprintf("%s -= %d", d, -int64(in.imm)))}
		}
		return []jen.Code{code(fmt.Sprintf("%s %s %s", d, o, u64(in.imm)))}
	}
	signed := in.off == 1
	switch code8 {
	case runtime.OpLshImm, runtime.OpRshImm, runtime.OpArshImm:
		amount := fmt.Sprint(in.imm & 63)
		if x {
			amount = fmt.Sprintf("(%s & 63)", s)
		}
		switch code8 {
		case runtime.OpLshImm:
			return []jen.Code{code(fmt.Sprintf("%s <<= %s", d, amount))}
		case runtime.OpRshImm:
			return []jen.Code{code(fmt.Sprintf("%s >>= %s", d, amount))}
		}
		return set("uint64(int64(%s) >> %s)", d, amount)
	case runtime.OpDivImm:
		switch {
		case x && signed:
			return []jen.Code{code(fmt.Sprintf("if s := int64(%s); s != 0 { %s = uint64(int64(%s) / s) } else { %s = 0 }", s, d, d, d))}
		case x:
			return []jen.Code{code(fmt.Sprintf("if %s != 0 { %s /= %s } else { %s = 0 }", s, d, s, d))}
		case in.imm == 0:
			return set("0")
		case signed:
			return set("uint64(int64(%s) / %d)", d, in.imm)
		}
		return []jen.Code{code(fmt.Sprintf("%s /= %s", d, u64(in.imm)))}
	case runtime.OpModImm:
		switch {
		case x && signed:
			return []jen.Code{code(fmt.Sprintf("if s := int64(%s); s != 0 { %s = uint64(int64(%s) %% s) }", s, d, d))}
		case x:
			return []jen.Code{code(fmt.Sprintf("if %s != 0 { %s %%= %s }", s, d, s))}
		case in.imm == 0:
			return nil
		case signed:
			return set("uint64(int64(%s) %% %d)", d, in.imm)
		}
		return []jen.Code{code(fmt.Sprintf("%s %%= %s", d, u64(in.imm)))}
	case runtime.OpNeg:
		return set("-%s", d)
	case runtime.OpMovImm:
		switch {
		case !x:
			return set("%s", u64(in.imm))
		case in.off != 0:
			return set("uint64(int64(int%d(%s)))", in.off, s)
		case in.src == in.dst:
			return nil
		case e.opaqueMov[in.pc]:
			return []jen.Code{code(d+" = ", e.rt("Opaque"), "("+s+")")}
		}
		return set("%s", s)
	case runtime.OpBswap:
		return e.swap(d, in.imm)
	}
	panic(fmt.Sprintf("alu64: opcode %#x passed validation", in.op))
}

func (e *emitter) swap(d string, width int32) []jen.Code {
	switch width {
	case 16:
		return []jen.Code{code(d+" = uint64(", jen.Qual(pkgBits, "ReverseBytes16"), fmt.Sprintf("(uint16(%s)))", d))}
	case 32:
		return []jen.Code{code(d+" = uint64(", jen.Qual(pkgBits, "ReverseBytes32"), fmt.Sprintf("(uint32(%s)))", d))}
	}
	return []jen.Code{code(d+" = ", jen.Qual(pkgBits, "ReverseBytes64"), fmt.Sprintf("(%s)", d))}
}

func (e *emitter) alu32(in *aotInsn) []jen.Code {
	d := e.r(in.dst)
	x := in.op&8 != 0
	var s, k string // s: the source as uint32; k likewise for display of shifts
	if x {
		s = fmt.Sprintf("uint32(%s)", e.r(in.src))
	} else {
		s = u32(in.imm)
	}
	set := func(format string, args ...any) []jen.Code {
		return []jen.Code{code(d + " = " + fmt.Sprintf(format, args...))}
	}
	op := map[runtime.Opcode]string{runtime.OpAddImm: "+", runtime.OpSubImm: "-", runtime.OpMulImm: "*", runtime.OpOrImm: "|", runtime.OpAndImm: "&", runtime.OpXorImm: "^"}
	code8 := aluOp(in.op)
	if o, ok := op[code8]; ok {
		return set("uint64(uint32(%s) %s %s)", d, o, s)
	}
	signed := in.off == 1
	switch code8 {
	case runtime.OpLshImm, runtime.OpRshImm, runtime.OpArshImm:
		k = fmt.Sprint(uint32(in.imm) & 31)
		if x {
			k = fmt.Sprintf("(%s & 31)", s)
		}
		switch code8 {
		case runtime.OpLshImm:
			return set("uint64(uint32(%s) << %s)", d, k)
		case runtime.OpRshImm:
			return set("uint64(uint32(%s) >> %s)", d, k)
		}
		return set("uint64(uint32(int32(%s) >> %s))", d, k)
	case runtime.OpDivImm:
		switch {
		case x && signed:
			return []jen.Code{code(fmt.Sprintf("if s := int32(%s); s != 0 { %s = uint64(uint32(int32(%s) / s)) } else { %s = 0 }", e.r(in.src), d, d, d))}
		case x:
			return []jen.Code{code(fmt.Sprintf("if s := %s; s != 0 { %s = uint64(uint32(%s) / s) } else { %s = 0 }", s, d, d, d))}
		case in.imm == 0:
			return set("0")
		case signed:
			return set("uint64(uint32(int32(%s) / %d))", d, in.imm)
		}
		return set("uint64(uint32(%s) / %s)", d, s)
	case runtime.OpModImm:
		switch {
		case x && signed:
			return []jen.Code{code(fmt.Sprintf("if s := int32(%s); s != 0 { %s = uint64(uint32(int32(%s) %% s)) } else { %s = uint64(uint32(%s)) }", e.r(in.src), d, d, d, d))}
		case x:
			return []jen.Code{code(fmt.Sprintf("if s := %s; s != 0 { %s = uint64(uint32(%s) %% s) } else { %s = uint64(uint32(%s)) }", s, d, d, d, d))}
		case in.imm == 0:
			return set("uint64(uint32(%s))", d)
		case signed:
			return set("uint64(uint32(int32(%s) %% %d))", d, in.imm)
		}
		return set("uint64(uint32(%s) %% %s)", d, s)
	case runtime.OpNeg:
		return set("uint64(-uint32(%s))", d)
	case runtime.OpMovImm:
		switch {
		case !x:
			return set("%s", s)
		case in.off != 0:
			return set("uint64(uint32(int32(int%d(%s))))", in.off, e.r(in.src))
		}
		return set("uint64(%s)", s)
	case runtime.OpBswap:
		if x { // be: swap on a little-endian guest
			return e.swap(d, in.imm)
		}
		switch in.imm {
		case 16:
			return set("uint64(uint16(%s))", d)
		case 32:
			return set("uint64(uint32(%s))", d)
		}
		return nil // le64 is the identity
	}
	panic(fmt.Sprintf("alu32: opcode %#x passed validation", in.op))
}

// sizeOf is the access size of a load or store opcode.
func sizeOf(op runtime.Opcode) int {
	return map[runtime.Opcode]int{0x00: 4, 0x08: 2, 0x10: 1, 0x18: 8}[op&0x18] // the size field
}

// inFrame reports whether base+off .. +size is provably inside the
// current frame: base is r10 itself and the offset is constant.
func inFrame(base uint8, off int16, size int) bool {
	return base == 10 && int(off) >= -512 && int(off)+size <= 0
}

func (e *emitter) addr(base uint8, off int16) string {
	return offset(e.r(base), int64(off))
}

func (e *emitter) load(in *aotInsn) []jen.Code {
	size := sizeOf(in.op)
	live := e.live(in.pc, in.dst)
	var val *jen.Statement
	var stmts []jen.Code
	if inFrame(in.src, in.off, size) {
		if !live {
			return nil
		}
		e.frame = true
		val = code(leLoad("fp", 512+int(in.off), size))
	} else if e.copying >= 0 && e.tailRegions[e.copying] && e.tail[in.pc] {
		// Proven inside the buffer, the access cannot fault.
		if !live {
			return nil
		}
		val = code(e.rt(fmt.Sprintf("TailLoad%d", size*8)).Call(code(fmt.Sprintf("tail, %s - a1", e.addr(in.src, in.off)))))
	} else if pre, w, k, ok := e.windowAccess(in, in.src); ok {
		// Proven in range, the access cannot fault: a dead one only
		// takes its window.
		if !live {
			return pre
		}
		stmts = pre
		val = code(leLoad(w, int(k), size))
	} else {
		val = code(fmt.Sprintf("m.Load%dAt(%s, %d)", size*8, e.addr(in.src, in.off), in.pc))
		if !live {
			return []jen.Code{code("_ = ", val)}
		}
	}
	if in.op == runtime.OpLdxsb || in.op == runtime.OpLdxsh || in.op == runtime.OpLdxsw {
		val = code(fmt.Sprintf("uint64(int64(int%d(", size*8), val, ")))")
	}
	return append(stmts, code(e.r(in.dst)+" = ", val))
}

func (e *emitter) store(in *aotInsn) []jen.Code {
	size := sizeOf(in.op)
	var v string // the value, as a uint64 expression
	if in.class() == runtime.ClassSTX {
		v = e.r(in.src)
	} else {
		v = u64(in.imm)
	}
	// The bytes to store: v's, or the immediate's.
	bv, imm := v, uint64(int64(in.imm))
	if in.class() != runtime.ClassSTX {
		bv = ""
	}
	if !inFrame(in.dst, in.off, size) {
		if pre, w, k, ok := e.windowAccess(in, in.dst); ok {
			return append(pre, leStore(e, w, int(k), size, bv, imm)...)
		}
		return []jen.Code{code(fmt.Sprintf("m.Store%dAt(%s, %s, %d)", size*8, e.addr(in.dst, in.off), v, in.pc))}
	}
	e.frame = true
	return leStore(e, "fp", 512+int(in.off), size, bv, imm)
}

// atomic translates an atomic instruction into a call of the runtime's
// operation of that name on the cell Atomic32At or Atomic64At checks, which
// is atomic against other runs, Go and the kernel. An add, the common
// atomic (counters), first asks Owned32 or Owned64 whether only the run
// can write the cell, and then takes a plain read-modify-write. A cell in
// the frame's constant slots, which nothing else can see, takes one too.
func (e *emitter) atomic(in *aotInsn) []jen.Code {
	w := 64
	if in.op == runtime.OpAtomicW {
		w = 32
	}
	if k := 512 + int(in.off); inFrame(in.dst, in.off, w/8) && k%(w/8) == 0 {
		return e.frameAtomic(in, w, k)
	}
	// The register a fetching operation loads, when it is live.
	dst := ""
	switch {
	case in.imm == 0xf1: // cmpxchg
		if e.live(in.pc, 0) {
			dst = e.r(0)
		}
	case in.imm&1 != 0 && e.live(in.pc, in.src):
		dst = e.r(in.src)
	}
	arg := func(r uint8) *jen.Statement {
		if w == 32 {
			return code(fmt.Sprintf("uint32(%s)", e.r(r)))
		}
		return code(e.r(r))
	}
	args := []jen.Code{code(fmt.Sprintf("m.Atomic%dAt(%s, %d)", w, e.addr(in.dst, in.off), in.pc))}
	if in.imm == 0xf1 {
		args = append(args, arg(0))
	}
	args = append(args, arg(in.src))
	name := map[int32]string{0x00: "Add", 0x40: "Or", 0x50: "And", 0xa0: "Xor", 0xe0: "Swap", 0xf0: "CmpXchg"}[in.imm&^1]
	if dst != "" && in.imm&^1 != 0xe0 && in.imm&^1 != 0xf0 {
		name = "Fetch" + name
	}
	call := e.rt(fmt.Sprintf("%s%d", name, w)).Call(args...)
	set := func(call jen.Code) jen.Code {
		switch {
		case dst == "":
			return call
		case w == 32:
			return code(dst+" = uint64(", call, ")")
		}
		return code(dst+" = ", call)
	}
	if name != "Add" && name != "FetchAdd" {
		return []jen.Code{set(call)}
	}
	// An add on a cell only the run can write needs no locked instruction.
	plain := e.rt(fmt.Sprintf("PlainAdd%d", w)).Call(code("p"), arg(in.src))
	return []jen.Code{jen.If(code(fmt.Sprintf("p := m.Owned%d(%s); p != nil", w, e.addr(in.dst, in.off)))).Block(set(plain)).Else().Block(set(call))}
}

// frameAtomic is atomic for an aligned cell at fp[k:].
func (e *emitter) frameAtomic(in *aotInsn, w, k int) []jen.Code {
	e.frame = true
	s := e.r(in.src)
	cell := fmt.Sprintf("fp[%d:]", k)
	put := func(v string) *jen.Statement { return e.rt(fmt.Sprintf("PutLE%d", w)).Call(code(cell), code(v)) }
	stmts := []jen.Code{code("old := " + leLoad("fp", k, w/8))}
	ops := map[int32]string{0x00: "+", 0x40: "|", 0x50: "&", 0xa0: "^"}
	switch in.imm {
	case 0xe1: // xchg
		if !e.live(in.pc, in.src) {
			return []jen.Code{put(s)}
		}
		stmts = append(stmts, put(s))
	case 0xf1: // cmpxchg
		cmp := e.r(0)
		if w == 32 {
			cmp = fmt.Sprintf("uint64(uint32(%s))", cmp)
		}
		stmts = append(stmts, jen.If(code("old == "+cmp)).Block(put(s)))
		if e.live(in.pc, 0) {
			stmts = append(stmts, code(e.r(0)+" = old"))
		}
		return []jen.Code{jen.Block(stmts...)}
	default:
		stmts = append(stmts, put("old"+ops[in.imm&^1]+s))
	}
	if in.imm&1 != 0 && e.live(in.pc, in.src) {
		stmts = append(stmts, code(s+" = old"))
	}
	return []jen.Code{jen.Block(stmts...)}
}

// cond is the Go condition of a conditional jump.
func (e *emitter) cond(in *aotInsn) string {
	code8 := jmpOp(in.op)
	is32 := in.class() == runtime.ClassJMP32
	x := in.op&8 != 0
	signed := code8 == runtime.OpJsgtImm || code8 == runtime.OpJsgeImm || code8 == runtime.OpJsltImm || code8 == runtime.OpJsleImm
	var d, s string
	switch {
	case is32 && signed:
		d = fmt.Sprintf("int32(%s)", e.r(in.dst))
		s = fmt.Sprint(in.imm)
		if x {
			s = fmt.Sprintf("int32(%s)", e.r(in.src))
		}
	case is32:
		d = fmt.Sprintf("uint32(%s)", e.r(in.dst))
		s = u32(in.imm)
		if x {
			s = fmt.Sprintf("uint32(%s)", e.r(in.src))
		}
	case signed:
		d = fmt.Sprintf("int64(%s)", e.r(in.dst))
		s = fmt.Sprint(in.imm)
		if x {
			s = fmt.Sprintf("int64(%s)", e.r(in.src))
		}
	default:
		d = e.r(in.dst)
		s = u64(in.imm)
		if x {
			s = e.r(in.src)
		}
	}
	ops := map[runtime.Opcode]string{runtime.OpJeqImm: "==", runtime.OpJgtImm: ">", runtime.OpJgeImm: ">=", runtime.OpJneImm: "!=", runtime.OpJsgtImm: ">", runtime.OpJsgeImm: ">=",
		runtime.OpJltImm: "<", runtime.OpJleImm: "<=", runtime.OpJsltImm: "<", runtime.OpJsleImm: "<="}
	if code8 == runtime.OpJsetImm {
		return fmt.Sprintf("%s&%s != 0", d, s)
	}
	return fmt.Sprintf("%s %s %s", d, ops[code8], s)
}

func (e *emitter) jump(in *aotInsn) []jen.Code {
	switch {
	case in.op == runtime.OpJa || in.op == runtime.OpJa32:
		return e.jumpTo(in.pc, in.target)
	case in.op == runtime.OpExit && e.parts != nil:
		return append(e.charge(in.pc), e.leavePart(-1))
	case in.op == runtime.OpExit:
		ret := []jen.Code{jen.Id(e.r(0)), jen.Id("b")}
		for _, r := range e.fn.out.regs() {
			ret = append(ret, jen.Id(e.r(r)))
		}
		return append(e.charge(in.pc), jen.Return(ret...))
	case in.op == runtime.OpCall && in.src == 1:
		stmts := e.call(in, e.prog.funcs[in.target])
		e.pending = 0
		return stmts
	case in.op == runtime.OpCall:
		// map_lookup_elem has a direct path for the built-in helper, and
		// map calls whose map, key (and an update's value and flags) are
		// known one more direct.
		fn := "CallAt"
		if in.src == 0 && in.imm == runtime.HelperMapLookupElem {
			fn = "LookupAt"
		}
		call := code(fmt.Sprintf("m.%s(%d, %s, %s, %s, %s, %s)", fn, in.pc, e.r(1), e.r(2), e.r(3), e.r(4), e.r(5)))
		site, direct := e.sites[in.pc]
		switch {
		case direct:
			e.frame = true
			fast := directMapCall(site)
			if !e.live(in.pc, 0) {
				return []jen.Code{code("if _, ok := " + fast + "; !ok").Block(call)}
			}
			return []jen.Code{code("if v, ok := " + fast + "; ok").Block(code(e.r(0) + " = v")).Else().Block(code(e.r(0)+" = ", call))}
		case e.live(in.pc, 0):
			return []jen.Code{code(e.r(0)+" = ", call)}
		}
		return []jen.Code{call}
	case in.op == runtime.OpCallx:
		return e.callx(in)
	case e.trees[in.pc] != nil:
		return e.treeSwitch(in)
	}
	return []jen.Code{jen.If(code(e.cond(in))).Block(e.jumpTo(in.pc, in.target)...)}
}

// call is a bpf-to-bpf call of g: depth check, budget, then the Go call.
func (e *emitter) call(in *aotInsn, g *aotFunc) []jen.Code {
	stmts := []jen.Code{jen.Id("m").Dot("CheckDepth").Call(jen.Id("d"), jen.Lit(in.pc))}
	stmts = append(stmts, e.charge(in.pc)...)
	args := []jen.Code{jen.Id("m"), jen.Id("d+1"), jen.Id("b")}
	for _, r := range g.in.regs() {
		args = append(args, jen.Id(e.r(r)))
	}
	lhs := []jen.Code{jen.Id("_"), jen.Id("b")}
	if e.live(in.pc, 0) {
		lhs[0] = jen.Id(e.r(0))
	}
	for _, r := range g.out.regs() {
		if e.live(in.pc, r) {
			lhs = append(lhs, jen.Id(e.r(r)))
		} else {
			lhs = append(lhs, jen.Id("_"))
		}
	}
	return append(stmts, jen.List(lhs...).Op("=").Id(e.fnName(g.entry)).Call(args...))
}

// callx resolves the target at run time: a helper id is called by the
// runtime, a function address selects one of the translated functions.
func (e *emitter) callx(in *aotInsn) []jen.Code {
	v := "_"
	var helper []jen.Code
	if e.live(in.pc, 0) {
		v = "v"
		helper = append(helper, code(e.r(0)+" = v"))
	}
	resolve := code(fmt.Sprintf("t, %s := m.CallX(%d, %s, %s, %s, %s, %s, %s)", v, in.pc, e.r(in.dst), e.r(1), e.r(2), e.r(3), e.r(4), e.r(5)))
	cases := []jen.Code{jen.Case(jen.Lit(-1)).Block(helper...)}
	pending := e.pending
	for _, g := range e.prog.fnList {
		body := e.call(in, g)
		// The helper path charges nothing, so the straight-line run goes
		// on after the callx; give back what the call charged so that the
		// next charge takes it again.
		body = append(body, e.adjust(-pending)...)
		cases = append(cases, jen.Case(jen.Lit(g.entry)).Block(body...))
	}
	cases = append(cases, jen.Default().Block(e.rt("NoFunction").Call(jen.Lit(in.pc), jen.Id("t"))))
	return []jen.Code{jen.Switch(resolve.Op(";").Id("t")).Block(cases...)}
}
