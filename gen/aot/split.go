package aot

import (
	"fmt"
	"slices"
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// A BPF function of more than splitAbove instructions is emitted as parts
// of about partSize instructions each, Go functions that a dispatcher
// calls in turn. The Go compiler's time grows faster than a function's
// length, from about 10,000 instructions on: a program clang made of
// 20,000 instructions in one function took 7 CPU seconds and 360 MB to
// build, one of 40,000 took 22 s and 730 MB; as parts, 2.6 s and 190 MB,
// and 6 s and 300 MB, and one of 100,000 takes 14 s and 670 MB. Tests
// lower both to split small programs.
var splitAbove, partSize = 8000, 2000

// partCode is the code of one part, as the function's emission left it.
type partCode struct {
	body  []jen.Code
	frame bool // the part indexes the frame fp
	r10   bool // the part reads r10
}

// splitPoints returns where the parts of f start: the first at f's first
// instruction, each further one at the first instruction, after partSize
// more, that no hoisted loop (from the jump entering it, for a rotated
// loop) or compare tree spans, since their code jumps within itself.
// Every part start becomes a label, so that a part boundary is an edge
// like any other for the budget (see budgetPlan) and span blocks stop at
// it.
func (e *emitter) splitPoints(f *aotFunc, loops map[int]*hoistLoop) []int {
	type span struct{ lo, hi int }
	var spans []span
	for _, l := range loops {
		s := span{l.head, l.back}
		for _, pc := range l.order {
			s.lo, s.hi = min(s.lo, pc), max(s.hi, pc)
		}
		if l.entry >= 0 {
			s.lo, s.hi = min(s.lo, l.entry), max(s.hi, l.entry)
		}
		spans = append(spans, s)
	}
	for _, t := range e.trees {
		s := span{t.root, t.root}
		for pc := range t.inner {
			s.hi = max(s.hi, pc)
		}
		spans = append(spans, s)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	starts := []int{f.body[0]}
	n, reach := 0, -1 // reach: the end of the spans that start before pc
	for _, pc := range f.body {
		for len(spans) > 0 && spans[0].lo < pc {
			reach = max(reach, spans[0].hi)
			spans = spans[1:]
		}
		if n >= partSize && pc > reach {
			starts = append(starts, pc)
			n = 0
		}
		n++
	}
	return starts
}

// partRegs are the registers the parts of f take and return: every one
// that f or a function it calls may read or write.
func (p *aotProgram) partRegs(f *aotFunc) []uint8 {
	set := reg(0) | f.in | f.out
	for _, pc := range f.body {
		x := p.effect(f, p.insns[pc])
		set |= x.use | x.def
	}
	return set.regs()
}

// partOf is the index of the part holding instruction pc.
func (e *emitter) partOf(pc int) int { return sort.SearchInts(e.parts, pc+1) - 1 }

// goTo is the jump to instruction pc at its label name: a goto, or to
// another part, a return to the dispatcher.
func (e *emitter) goTo(pc int, name string) jen.Code {
	if e.parts != nil && e.partOf(pc) != e.part {
		return e.leavePart(pc)
	}
	return jen.Goto().Id(name)
}

// leavePart returns from the part being emitted to the dispatcher, which
// runs instruction pc next, or with -1 returns from the function.
func (e *emitter) leavePart(pc int) jen.Code {
	if pc >= 0 {
		e.entered[pc] = true
	}
	return jen.Return(append([]jen.Code{jen.Lit(pc), jen.Id("b")}, regIds(e.partRegs)...)...)
}

// splitFunction is f as a dispatcher and its parts. A part takes the
// instruction to start at, the budget and the registers, enters its code
// at that instruction's label, and returns the next instruction, the
// budget and the registers whenever control leaves it: b then holds the
// target's pending count, as at any jump to a label.
func (e *emitter) splitFunction(f *aotFunc, parts []partCode) jen.Code {
	name := func(k int) string { return fmt.Sprintf("%sAt%d", e.fnName(f.entry), e.parts[k]) }
	// A part is entered at its first instruction and wherever control
	// comes from elsewhere; the dispatcher calls it for those.
	byPart := make([][]int, len(parts))
	for _, start := range e.parts {
		e.entered[start] = true
	}
	for _, pc := range sortedKeys(e.entered) {
		k := e.partOf(pc)
		byPart[k] = append(byPart[k], pc)
	}
	regs := jen.List(regIds(e.partRegs)...)
	var cases []jen.Code
	var funcs []jen.Code
	for k, part := range parts {
		var lits, enter []jen.Code
		for _, pc := range byPart[k] {
			lits = append(lits, jen.Lit(pc))
			to := label(pc)
			if e.jumpedTo[pc] != nil {
				to = fmt.Sprintf("H%d", pc)
			}
			enter = append(enter, jen.Case(jen.Lit(pc)).Block(jen.Goto().Id(to)))
		}
		cases = append(cases, jen.Case(lits...).Block(
			jen.List(jen.Id("pc"), jen.Id("b"), regs.Clone()).Op("=").Id(name(k)).Call(jen.Id("m"), jen.Id("d"), jen.Id("b"), jen.Id("pc"), regs.Clone()),
		))
		var decl []jen.Code
		if part.frame {
			decl = append(decl, jen.Id("fp").Op(":=").Id("m").Dot("Frame").Call(jen.Id("d")))
		}
		if part.r10 {
			decl = append(decl, jen.Id("r10").Op(":=").Add(e.rt("StackTop")).Call(jen.Id("d")))
		}
		decl = append(decl, jen.Switch(jen.Id("pc")).Block(enter...))
		last := f.body[len(f.body)-1]
		if k+1 < len(e.parts) {
			last = f.body[slices.Index(f.body, e.parts[k+1])-1]
		}
		results := []jen.Code{jen.Int(), jen.Int64()}
		for range e.partRegs {
			results = append(results, jen.Uint64())
		}
		funcs = append(funcs, gocomment.Commentf("%s runs instructions %d to %d of %s from instruction pc; it returns the instruction to run next (-1 when the function returns), the budget and the registers.", name(k), e.parts[k], last, e.fnName(f.entry)).Line().
			Func().Id(name(k)).Params(
			jen.Id("m").Op("*").Add(e.rt("Machine")), jen.Id("d").Int(), jen.Id("b").Int64(), jen.Id("pc").Int(), regs.Clone().Uint64(),
		).Params(results...).Block(append(decl, part.body...)...))
	}
	ret := []jen.Code{jen.Id("r0"), jen.Id("b")}
	ret = append(ret, regIds(f.out.regs())...)
	cases = append(cases, jen.Default().Block(jen.Return(ret...)))
	var body []jen.Code
	var locals []uint8
	for _, r := range e.partRegs {
		if !f.in.has(r) {
			locals = append(locals, r)
		}
	}
	if len(locals) > 0 {
		body = append(body, jen.Var().List(regIds(locals)...).Uint64())
	}
	body = append(body, jen.Id("pc").Op(":=").Lit(f.entry))
	body = append(body, e.adjust(-e.phi[f.entry])...)
	body = append(body, jen.For().Block(jen.Switch(jen.Id("pc")).Block(cases...)))
	more := fmt.Sprintf(" Its %d instructions run in %d parts, Go functions small enough for the compiler to build quickly, called in turn.", len(f.body), len(parts))
	out := e.signature(f, more).Block(body...)
	for _, fn := range funcs {
		out.Line().Line().Add(fn)
	}
	return out
}
