// Package aot translates user-space eBPF programs ahead of time into Go.
//
// Translate turns one program into Go source that the Go compiler makes
// native code of. Each BPF function (the entry at instruction 0, every
// bpf-to-bpf call target, every function whose address lddw takes) becomes
// one Go function:
//
//   - registers are local uint64 variables; a liveness analysis decides
//     which ones a function declares, takes as parameters (those it reads
//     before writing: r1–r5 and anything else the caller's value shows
//     through, as in the interpreter, where registers are shared) and
//     returns (r0, and the r1–r5 a caller reads after the call); writes
//     nobody reads are dropped unless they can fault;
//   - jumps are labels and goto, in instruction order, so fall-through stays
//     fall-through;
//   - memory goes through the runtime's inlinable trapping accessors
//     (Machine.Load32At and friends), which carry the instruction index into
//     the error; loads and stores relative to r10 with a constant offset
//     inside the frame index the frame's array directly, with no check:
//     loads and constant stores byte by byte in little-endian order (the
//     compiler merges the bytes into one machine load or store;
//     binary.LittleEndian would leave an inline mark, a NOP run on every
//     access), stores of registers through runtime.PutLE32 and its
//     siblings, one machine store each (merged byte stores come apart
//     when the compiler knows the value's upper bytes are zero, and a
//     helper reading the slot as a whole, a map key say, then waits for
//     them to retire);
//   - a run of straight-line code (no label, jump, call or atomic inside)
//     with two or more accesses through one base register it does not
//     change, as clang writes an unrolled loop or a header's field reads, is
//     emitted twice: Memory.BlockSpan (SpanAt, not inlined: see there)
//     checks the span of all those accesses once, and when it is in its
//     region a copy indexes one view of it; otherwise the checked copy runs
//     and faults where the interpreter does. Straight-line code charges no
//     budget, so both copies leave the same state (blocks.go);
//   - a counted innermost loop (counter stepping up to a bound, tested by
//     jlt or jle, or by jne or clang-19's "jeq out; ja back" when the
//     counter meets the bound exactly, as one stepping down to it must, or
//     through a register computed from it, as clang-19 tests i + 8 <= len;
//     also the loops clang rotates, entered in the middle of their body,
//     whose ways back may enter the latch past its start (the tails of a
//     switch's cases that clang merged into it), loops whose arms clang
//     placed past their exit, jumping back into the latch (an if-else
//     chain's), which the copy runs in an order where every jump goes
//     forward (withArms),
//     and loops that jumps from outside enter at their head; base
//     registers stepping up or down by constants, or computed in the loop
//     as a register it does not write plus an index masked by an
//     immediate and perhaps scaled, as clang writes data[(i & 255) * 8];
//     no calls) is emitted
//     twice: before
//     it, runtime.LoopTrips bounds its iterations and Memory.SpanAt takes
//     the span of each base's region that its accesses can reach; when
//     both succeed and the budget covers every iteration, a copy of the
//     loop accesses those spans through windows: made once before the
//     loop (runtime.WindowOf), a runtime.Window takes, with one compare (a
//     safety net), the bytes that a run of accesses through one base with
//     no label or write of the base between them reaches, as a *[n]byte
//     that they index at constant offsets, one machine load or store
//     each, found from how far the base's stepping register went since the
//     head (for a masked index, from the base less the register it was
//     added to; its span is the mask's reach); it checks no budget and still counts b, except for its back
//     edge, which it charges once: before the loop when the counter's test
//     is its only way out, else as it leaves, from how far the counter
//     went; else the checked loop runs. A
//     counted loop with no such accesses (branchy arithmetic, Log2) gets
//     the same copy for the budget alone. The copy passes the 64-bit
//     constants it reads through runtime.Opaque (Go would otherwise rebuild
//     them at each use). When the counter's test is the loop's only way
//     out, the copy is a Go range loop over its j+1 iterations, and a base
//     whose accesses cover exactly its stride each iteration is read
//     through runtime.Views, element k in iteration k, which Go itself
//     proves in range (no check per access); otherwise a short
//     straight-line body runs two iterations per pass, each with its own
//     test. Both copies do
//     the same operations in the same order, so results, faults, their
//     instruction and the budget are the same (loops.go);
//   - a tree of seven or more conditional jumps that compare one register
//     with constants up to 255, each reached only from the tree, as clang
//     lowers a switch (BPF has no jump tables), becomes one Go switch over
//     the register's values, which Go compiles into a jump table or a
//     search over ranges; each value's case charges and checks the budget
//     where its path through the tree would, then jumps to the leaf it
//     reaches. Branchy trees also run at speeds that vary with where the
//     linker puts them; the switch does much less so (tree.go);
//   - helpers and externs are called through Machine.CallAt with the call's
//     instruction index, so they resolve exactly as the interpreter resolves
//     them, and callx through Machine.CallX and a switch over the functions;
//     helper 1, map_lookup_elem, goes through Machine.LookupAt, which runs
//     a hash-map lookup directly when the program binds the built-in
//     helper and calls CallAt otherwise; where the translation knows the
//     map (an lddw of its handle into r1) to be a hash map of 4- or 8-byte
//     keys or an array, and the key's place in the frame (r2 set from r10
//     by adds), in the straight-line code before the call, it reads the
//     key itself and calls Machine.Lookup32 or Lookup64, and LookupAt only
//     when they decline (another helper bound, a map that is not the
//     runtime's); helpers 2 and 3, map_update_elem and map_delete_elem,
//     known the same way (for an update also the value's place, r3 set
//     from r10 by adds, and the flags, a constant moved into r4), call
//     Machine.Update32 or Update64 with the value's bytes in the frame,
//     Delete32 or Delete64, and CallAt when they decline (another helper
//     bound, a read-only map, an insert that takes memory); the runtime
//     decides which calls qualify (Program.MapSite), for the interpreter
//     too (mapcall.go);
//   - the budget lives in a local: each straight-line run subtracts its
//     length where the interpreter charges it (taken jumps, bpf-to-bpf calls,
//     exits) and checks it there, so ErrBudget comes at the same instruction
//     with the same memory effects; call depth is checked before each call;
//   - a function is cut into budget regions, entered only at their first
//     instruction and run forward only: cut at every loop head (the target
//     of any back edge, hoisted or not), after bpf-to-bpf calls and where
//     control comes from two regions. A region entered at a loop head,
//     with two checks or more, is emitted twice: at the head one
//     comparison tells whether the budget
//     covers its longest path, and then a copy runs that subtracts as the
//     checked code does but checks nothing (a loop's back edge makes the
//     comparison again, in the copy, and stays in it while the budget
//     covers another pass), else the checked code runs. The copy carries
//     no comments: the checked code's give the source lines. So an
//     if-else chain or a switch in a loop has no check, a call of its
//     fault path, in its arms. Regions holding a hoisted loop, longer than 96 instructions
//     (256 when at least every fourth instruction checks, as in a
//     switch's compare tree), or past what would make the function longer
//     than splitAbove, and functions split into parts, keep one checked
//     copy (regions.go);
//   - in such a copy with no call, a load that a comparison with the end
//     of the buffer the function was given (r1 + r2 at its entry) proves
//     inside that buffer, as the kernel's verifier proves a packet access
//     (p = data + (u32)pc; if (p + 3 > data + len) exit; p[0..2]), reads
//     the tail of the buffer's region, taken at the function's entry and
//     after each call, at a bounds-checked offset (runtime.TailLoad8);
//     the copy's guard also asks that len bytes from data lie in its
//     region (bounds.go);
//   - division and modulo by zero, shifts and sign extension follow RFC 9669
//     as the interpreter does;
//   - a function of more than splitAbove instructions (8000) is split
//     into parts of about partSize (2000), since the Go compiler's time
//     and memory grow faster than a function's length: each part is a Go
//     function taking the instruction to start at, the budget and the
//     registers, entering its code through a switch of gotos to the
//     labels control comes to from elsewhere, and returning the next
//     instruction (-1 at exit), the budget and the registers whenever
//     control leaves it; the function itself calls the parts in a loop.
//     A part never starts inside a hoisted loop or a compare tree, and
//     its start is a label like any other, where b holds that label's
//     pending count, so the budget and errors come out as in one
//     function (split.go). The translation's doc and Options.Note say
//     how many Go functions a split program became;
//   - a move between registers whose source stays live goes through
//     runtime.Opaque outside loops and in loops that call something, so
//     that the two registers are different Go values: one value under two
//     names, entering a loop that writes one of them and spills the other
//     across a call, made go1.26's register allocator fail with an
//     internal compiler error (opaqueMoves).
//
// The generated code is gofmt'd (when rendered through a jen.File),
// vet-clean and deterministic. Where Options.Lines has an instruction's C
// source line, a comment gives it above the instruction's code, once per
// line; labels (L<pc>) name the instructions control comes to. The
// instructions themselves are not repeated in comments: an object's
// disassembly (llvm-objdump -d) has them.
//
// The translator works from the program as runtime.Load prepared it: the
// values of lddw's pseudo sources (map handles, addresses of globals and
// functions) are those the loaded program holds (Program.Imm64), so the
// translation never recomputes the runtime's address tags or region
// numbering.
//
// To run a translation, load the same ProgramSpec with runtime.Load (which
// resolves maps, globals, helpers and externs) and bind the generated
// <Name>Translation() to it:
//
//	p, err := runtime.Load(spec, opts)
//	c, err := p.Bind(xTranslation())
//	r0, err := c.Run(ctx)
//
// Bind checks every constant the translation compiled in (map handles and
// global addresses) against the loaded program, so a translation never runs
// against a program whose maps or globals were laid out differently.
package aot
