package runtime

import (
	"bytes"
	"fmt"
	"unsafe"
)

// validator checks a ProgramSpec once, at Load: opcodes, registers, fields
// that must be zero, jump and call targets, lddw pairs, helpers and
// externs; and it pre-decodes every slot into the interpreter's insn form.
type validator struct {
	p           *Program
	spec        *ProgramSpec
	opts        *Options
	valueRegion map[int]uint32
	funcIndex   map[string]int
	// stackCalls is set by a call that may write a stack frame it is
	// given: of an extern, or of a helper not known to be stackless.
	stackCalls bool
	// formats lists the calls of the built-in snprintf, whose formats
	// run checks at load (see checkFormats).
	formats []int
}

func (v *validator) fail(i int, format string, args ...any) error {
	return &ValidationError{Program: v.p.name, Insn: i, Msg: fmt.Sprintf(format, args...)}
}

func (v *validator) run() error {
	raw := v.spec.Instructions
	n := len(raw)
	if n == 0 {
		return v.fail(0, "program has no instructions")
	}
	if n > maxInsns {
		return v.fail(0, "program has %d instructions, more than %d", n, maxInsns)
	}
	insns := make([]insn, n)
	tail := make([]bool, n)  // second slots of lddw
	entry := make([]bool, n) // first instructions of functions
	joins := make([]bool, n) // instructions reached other than from the one before
	entry[0], joins[0] = true, true
	for i := 0; i < n; i++ {
		in := raw[i]
		if err := v.checkRegs(i, in); err != nil {
			return err
		}
		out, err := v.decode(i, in)
		if err != nil {
			return err
		}
		if in.Opcode == OpLddw {
			if i+1 >= n {
				return v.fail(i, "lddw is missing its second slot")
			}
			next := raw[i+1]
			if next.Opcode != 0 || next.Dst != 0 || next.Src != 0 || next.Offset != 0 {
				return v.fail(i+1, "second slot of lddw must have zero opcode, registers and offset")
			}
			if err := v.lddw(i, in, next, &out); err != nil {
				return err
			}
			insns[i] = out
			tail[i+1] = true
			i++
			continue
		}
		insns[i] = out
	}
	// Jump and call targets, now that every lddw tail is known.
	for i := range insns {
		in := &insns[i]
		if tail[i] {
			continue
		}
		target, kind := -1, ""
		switch {
		case isJump(raw[i].Opcode):
			target, kind = int(in.off), "jump"
		case in.op == opCallLocal:
			target, kind = int(in.imm), "call"
		case in.op == OpLddw && raw[i].Src == PseudoFunc:
			target, kind = int(uint32(in.imm)), "function address"
		}
		if kind == "" {
			continue
		}
		if target < 0 || target >= n {
			return v.fail(i, "%s target %d is outside the program (0..%d)", kind, target, n-1)
		}
		if tail[target] {
			return v.fail(i, "%s target %d is the middle of an lddw", kind, target)
		}
		joins[target] = true
		if kind != "jump" {
			entry[target] = true
		}
	}
	// Every function ends with exit or ja: falling into the next function
	// (or off the end) is rejected, as the kernel and ubpf reject it.
	ends := func(at int) bool {
		last := raw[at]
		if tail[at] {
			last = raw[at-1]
		}
		return last.Opcode == OpExit || last.Opcode == OpJa || last.Opcode == OpJa32
	}
	for i := 1; i < n; i++ {
		if entry[i] && !ends(i-1) {
			return v.fail(i-1, "function falls through into the function at instruction %d: the last instruction is not exit or ja", i)
		}
	}
	if !ends(n - 1) {
		return v.fail(n-1, "program falls off its end: the last instruction is not exit or ja")
	}
	v.p.entry = entry
	if err := v.checkFormats(joins, tail); err != nil {
		return err
	}
	// Division and modulo by an immediate zero become the instruction with
	// the same effect, so that exec need not test the divisor.
	for i := range insns {
		if in := &insns[i]; !tail[i] && in.imm == 0 {
			switch in.op {
			case OpDivImm, OpDiv32Imm:
				in.op = OpMovImm // dst = 0
			case OpModImm:
				in.op = opNop // dst unchanged
			case OpMod32Imm:
				in.op = opTrunc32 // dst = uint32(dst)
			}
		}
	}
	v.p.direct = directSites(raw, insns, tail, entry, v.p.maps)
	// callFunc runs a lookup at a direct site first thing (see there): x
	// marks it with the key's size (4 or 8 bytes), src holds the map's
	// index and off the key's offset from the frame's top.
	for i, d := range v.p.direct {
		if d.fn == HelperMapLookupElem && d.mi < 256 {
			insns[i].x, insns[i].src, insns[i].off = uint8(d.ks), uint8(d.mi), d.off
		}
	}
	if !v.opts.noFusion {
		fuse(insns, tail)
	}
	// The interpreter follows a jump by adding its distance in bytes from
	// the next slot to the instruction pointer (see exec). A pair fused
	// with the jump in its second slot holds the distance from the slot
	// after the pair, computed before that jump's own.
	for i := range insns {
		if jumpsSecond(insns[i].op) {
			insns[i].off = (insns[i+1].off - int32(i) - 2) * int32(unsafe.Sizeof(insn{}))
		}
		if !tail[i] && isJump(raw[i].Opcode) {
			insns[i].off = (insns[i].off - int32(i) - 1) * int32(unsafe.Sizeof(insn{}))
		}
	}
	v.p.insns = insns
	v.p.stackLow = stackLow(raw, v.stackCalls)
	return nil
}

// stackLow returns the lowest offset in a stack frame that a run of the
// program raw can write: StackSize when it writes no frame, 0 when it may
// write anywhere in one. Only stores and atomics through r10 at a
// constant offset are confined to a frame's slots; a store through any
// other register may reach a frame by a copied r10 or a forged address,
// and callx, or a helper or extern that writes through a pointer it is
// given (stackCalls: any but the runtime's stackless helpers), may write
// anywhere, so each of those lowers the bound to 0. Bytes below the bound
// are never written, stay zero from the Machine's creation on, and need
// no clearing between runs (see Machine.begin).
func stackLow(raw []Instruction, stackCalls bool) int {
	low := StackSize
	for _, in := range raw {
		// The second slots of lddw have opcode 0 and match no case.
		switch c := in.Opcode & 7; {
		case c == classST || c == classSTX:
			if in.Dst != 10 {
				return 0
			}
			low = min(low, max(0, StackSize+int(in.Offset)))
		case (c == classJMP || c == classJMP32) && in.Opcode&0xf0 == jmpCALL:
			if in.Opcode != OpCall || in.Src != PseudoCall && stackCalls {
				return 0
			}
		}
	}
	return low
}

// maxInsns bounds a program's length so that every jump's distance in bytes
// fits the 32-bit offset of insn.
const maxInsns = 1 << 27

func isJump(op Opcode) bool {
	c := op & 7
	if c != classJMP && c != classJMP32 {
		return false
	}
	switch op & 0xf0 {
	case jmpCALL, jmpEXIT:
		return false
	}
	return true
}

func (v *validator) checkRegs(i int, in Instruction) error {
	if in.Dst > 10 {
		return v.fail(i, "invalid destination register r%d", in.Dst)
	}
	if in.Src > 10 {
		// lddw and call carry pseudo sources, not registers, in src;
		// their values are checked with the instruction.
		if in.Opcode != OpLddw && in.Opcode != OpCall {
			return v.fail(i, "invalid source register r%d", in.Src)
		}
	}
	return nil
}

// decode checks one instruction's fields and translates it, except lddw
// which needs both slots.
func (v *validator) decode(i int, in Instruction) (insn, error) {
	out := insn{op: in.Opcode, dst: in.Dst, src: in.Src, off: int32(in.Offset), imm: int64(in.Imm)}
	op := uint8(in.Opcode) // a number in errors, not the mnemonic
	zero := func(fields string) error {
		for _, f := range fields {
			switch {
			case f == 'd' && in.Dst != 0:
				return v.fail(i, "opcode %#02x requires dst=0, got r%d", op, in.Dst)
			case f == 's' && in.Src != 0:
				return v.fail(i, "opcode %#02x requires src=0, got %d", op, in.Src)
			case f == 'o' && in.Offset != 0:
				return v.fail(i, "opcode %#02x requires offset=0, got %d", op, in.Offset)
			case f == 'i' && in.Imm != 0:
				return v.fail(i, "opcode %#02x requires imm=0, got %d", op, in.Imm)
			}
		}
		return nil
	}
	noR10 := func(r uint8) error {
		if r == 10 {
			return v.fail(i, "opcode %#02x writes the read-only frame pointer r10", op)
		}
		return nil
	}
	switch op & 7 {
	case classALU, classALU64:
		if err := noR10(in.Dst); err != nil {
			return out, err
		}
		is64 := op&7 == classALU64
		x := op&srcX != 0
		code := op & 0xf0
		var err error
		if x {
			err = zero("i")
		} else {
			err = zero("s")
		}
		if err != nil && code != aluEND {
			return out, err
		}
		if x && in.Src == 10 && !(is64 && in.Offset == 0 && (code == aluMOV || code == aluADD || code == aluSUB)) {
			// r10 is a tagged address: only copying it and moving it by an
			// offset mean anything, as in the kernel's pointer arithmetic rules.
			return out, v.fail(i, "opcode %#02x: invalid arithmetic on the frame pointer r10", op)
		}
		switch code {
		case aluADD, aluSUB, aluMUL, aluOR, aluAND, aluLSH, aluRSH, aluXOR, aluARSH:
			return out, zero("o")
		case aluDIV, aluMOD:
			switch in.Offset {
			case 0:
				return out, nil
			case 1:
				out.op = signedDivOp(code == aluDIV, is64, x)
				return out, nil
			}
			return out, v.fail(i, "opcode %#02x: offset must be 0 or 1 (signed), got %d", op, in.Offset)
		case aluMOV:
			if !x || in.Offset == 0 {
				return out, zero("o")
			}
			switch {
			case in.Offset == 8 || in.Offset == 16:
			case in.Offset == 32 && is64:
			default:
				return out, v.fail(i, "movsx: invalid offset %d", in.Offset)
			}
			out.op = opMovsx32
			if is64 {
				out.op = opMovsx64
			}
			return out, nil
		case aluNEG:
			if x {
				return out, v.fail(i, "unknown opcode %#02x", op)
			}
			return out, zero("sio")
		case aluEND:
			if x && is64 {
				return out, v.fail(i, "unknown opcode %#02x", op)
			}
			if err := zero("so"); err != nil {
				return out, err
			}
			swap := x || is64 // be (ALU|X) and bswap (ALU64) swap; le (ALU|K) does not on a little-endian guest
			switch {
			case in.Imm == 16 && swap:
				out.op = opSwap16
			case in.Imm == 32 && swap:
				out.op = opSwap32
			case in.Imm == 64 && swap:
				out.op = opSwap64
			case in.Imm == 16:
				out.op = opTrunc16
			case in.Imm == 32:
				out.op = opTrunc32
			case in.Imm == 64:
				out.op = opNop
			default:
				return out, v.fail(i, "byte swap width must be 16, 32 or 64, got %d", in.Imm)
			}
			return out, nil
		}
		return out, v.fail(i, "unknown opcode %#02x", op)
	case classJMP, classJMP32:
		code := op & 0xf0
		is32 := op&7 == classJMP32
		switch code {
		case jmpJA:
			if op&srcX != 0 {
				return out, v.fail(i, "unknown opcode %#02x", op)
			}
			if is32 {
				if err := zero("dso"); err != nil {
					return out, err
				}
				out.op = classJMP | jmpJA
				out.off = int32(int64(i) + 1 + int64(in.Imm))
				return out, nil
			}
			if err := zero("dsi"); err != nil {
				return out, err
			}
			out.off = int32(i + 1 + int(in.Offset))
			return out, nil
		case jmpCALL:
			if is32 {
				return out, v.fail(i, "unknown opcode %#02x", op)
			}
			if op&srcX != 0 {
				// callx: clang puts the register in dst; other
				// assemblers put it in imm with dst=0.
				v.p.calls = true
				if err := zero("so"); err != nil {
					return out, err
				}
				if in.Dst == 0 {
					if in.Imm < 0 || in.Imm > 10 {
						return out, v.fail(i, "callx: invalid register %d", in.Imm)
					}
					out.dst = uint8(in.Imm)
				} else if in.Imm != 0 {
					return out, v.fail(i, "callx: register in both dst and imm")
				}
				return out, nil
			}
			if err := zero("do"); err != nil {
				return out, err
			}
			return v.call(i, in)
		case jmpEXIT:
			if op&srcX != 0 || is32 {
				return out, v.fail(i, "unknown opcode %#02x", op)
			}
			return out, zero("dsio")
		case 0xe0, 0xf0:
			return out, v.fail(i, "unknown opcode %#02x", op)
		}
		// Conditional jumps.
		if op&srcX != 0 {
			if err := zero("i"); err != nil {
				return out, err
			}
		} else if err := zero("s"); err != nil {
			return out, err
		}
		out.off = int32(i + 1 + int(in.Offset))
		return out, nil
	case classLD:
		if in.Opcode == OpLddw {
			return out, nil // finished by lddw
		}
		return out, v.fail(i, "unknown opcode %#02x", op)
	case classLDX:
		switch op {
		case classLDX | modeMEM | sizeB, classLDX | modeMEM | sizeH, classLDX | modeMEM | sizeW, classLDX | modeMEM | sizeDW,
			classLDX | modeMEMSX | sizeB, classLDX | modeMEMSX | sizeH, classLDX | modeMEMSX | sizeW:
			if err := noR10(in.Dst); err != nil {
				return out, err
			}
			return out, zero("i")
		}
		return out, v.fail(i, "unknown opcode %#02x", op)
	case classST:
		switch op {
		case classST | modeMEM | sizeB, classST | modeMEM | sizeH, classST | modeMEM | sizeW, classST | modeMEM | sizeDW:
			return out, zero("s")
		}
		return out, v.fail(i, "unknown opcode %#02x", op)
	case classSTX:
		switch op {
		case classSTX | modeMEM | sizeB, classSTX | modeMEM | sizeH, classSTX | modeMEM | sizeW, classSTX | modeMEM | sizeDW:
			return out, zero("i")
		case classSTX | modeATOMIC | sizeW, classSTX | modeATOMIC | sizeDW:
			switch in.Imm {
			case atomicADD, atomicOR, atomicAND, atomicXOR:
				return out, nil
			case atomicADD | atomicFETCH, atomicOR | atomicFETCH, atomicAND | atomicFETCH, atomicXOR | atomicFETCH, atomicXCHG:
				return out, noR10(in.Src)
			case atomicCMPXCHG:
				return out, nil
			}
			return out, v.fail(i, "unknown atomic operation %#x", in.Imm)
		}
		return out, v.fail(i, "unknown opcode %#02x", op)
	}
	return out, v.fail(i, "unknown opcode %#02x", op)
}

func signedDivOp(div, is64, x bool) Opcode {
	switch {
	case div && !is64 && !x:
		return opSdiv32Imm
	case div && !is64:
		return opSdiv32Reg
	case div && !x:
		return opSdiv64Imm
	case div:
		return opSdiv64Reg
	case !is64 && !x:
		return opSmod32Imm
	case !is64:
		return opSmod32Reg
	case !x:
		return opSmod64Imm
	}
	return opSmod64Reg
}

// call resolves a call instruction's target.
func (v *validator) call(i int, in Instruction) (insn, error) {
	out := insn{op: opCallFunc}
	if in.Src != PseudoCall {
		v.p.calls = true
	}
	switch in.Src {
	case 0:
		h, ok := v.p.helpers.lookup(in.Imm)
		if !ok {
			return out, v.fail(i, "call to unknown helper %d", in.Imm)
		}
		out.imm = int64(v.addFunc(fmt.Sprintf("helper %d (%s)", in.Imm, h.name), h.fn))
		v.stackCalls = v.stackCalls || !h.stackless
		if h.format {
			v.formats = append(v.formats, i)
		}
		switch h.builtin {
		case HelperMapLookupElem:
			v.p.lookupFn = out.imm
		case HelperMapUpdateElem:
			v.p.updateBuiltin = true
		case HelperMapDeleteElem:
			v.p.deleteBuiltin = true
		}
		return out, nil
	case PseudoCall:
		out.op = opCallLocal
		out.imm = int64(i) + 1 + int64(in.Imm)
		return out, nil
	case PseudoKfuncCall:
		if in.Imm < 0 || int(in.Imm) >= len(v.spec.Externs) {
			return out, v.fail(i, "call to extern %d: only %d externs declared", in.Imm, len(v.spec.Externs))
		}
		name := v.spec.Externs[in.Imm]
		v.stackCalls = true
		fn := v.opts.Externs[name]
		if fn != nil {
			fn = hostCall(fn)
		} else {
			fn = v.p.helpers.extern(name)
		}
		if fn == nil {
			return out, v.fail(i, "call to unbound extern %q", name)
		}
		out.imm = int64(v.addFunc(name, fn))
		return out, nil
	}
	return out, v.fail(i, "call with invalid source %d", in.Src)
}

func (v *validator) addFunc(name string, fn Func) int {
	if n, ok := v.funcIndex[name]; ok {
		return n
	}
	v.p.funcs = append(v.p.funcs, fn)
	v.p.funcNames = append(v.p.funcNames, name)
	v.funcIndex[name] = len(v.p.funcs) - 1
	return len(v.p.funcs) - 1
}

// lddw resolves a 64-bit immediate load, turning pseudo sources into the
// tagged values they stand for.
func (v *validator) lddw(i int, in, next Instruction, out *insn) error {
	if err := v.zeroOffset(i, in); err != nil {
		return err
	}
	out.imm = int64(uint64(uint32(in.Imm)) | uint64(uint32(next.Imm))<<32)
	switch in.Src {
	case 0:
		return nil
	case PseudoMapFD, PseudoMapIdx:
		if err := v.mapIndex(i, in.Imm); err != nil {
			return err
		}
		if next.Imm != 0 {
			return v.fail(i, "lddw of a map handle with nonzero upper immediate")
		}
		out.imm = int64(Addr(tagMap|uint32(in.Imm), 0))
		return nil
	case PseudoMapValue, PseudoMapIdxValue:
		if err := v.mapIndex(i, in.Imm); err != nil {
			return err
		}
		region, err := v.mapValueRegion(i, int(in.Imm))
		if err != nil {
			return err
		}
		if next.Imm < 0 || int(next.Imm) > len(v.p.static.rd[region]) {
			return v.fail(i, "offset %d is outside the value of map %s", next.Imm, v.p.maps[in.Imm].Spec().Name)
		}
		out.imm = int64(Addr(region, uint32(next.Imm)))
		return nil
	case PseudoFunc:
		if next.Imm != 0 {
			return v.fail(i, "lddw of a function address with nonzero upper immediate")
		}
		out.imm = int64(Addr(tagFunc, uint32(int64(i)+1+int64(in.Imm))))
		return nil
	}
	return v.fail(i, "lddw with unsupported source %d", in.Src)
}

func (v *validator) zeroOffset(i int, in Instruction) error {
	if in.Offset != 0 {
		return v.fail(i, "lddw requires offset=0, got %d", in.Offset)
	}
	if in.Dst == 10 {
		return v.fail(i, "lddw writes the read-only frame pointer r10")
	}
	return nil
}

func (v *validator) mapIndex(i int, idx int32) error {
	if idx < 0 || int(idx) >= len(v.p.maps) {
		return v.fail(i, "reference to map %d: only %d maps given", idx, len(v.p.maps))
	}
	if v.p.maps[idx] == nil {
		return v.fail(i, "reference to map %d: map is nil", idx)
	}
	return nil
}

// mapValueRegion maps the value at key 0 of map idx as a static region:
// the form global sections (.data, .rodata, .bss) take. The slice Lookup
// returns here is used for the program's lifetime, so a Map backing
// globals must return memory that stays valid (user-space arrays do).
func (v *validator) mapValueRegion(i, idx int) (uint32, error) {
	if r, ok := v.valueRegion[idx]; ok {
		return r, nil
	}
	m := v.p.maps[idx]
	spec := m.Spec()
	key := make([]byte, spec.KeySize)
	val, err := m.Lookup(key)
	if err != nil {
		return 0, v.fail(i, "map %s: value at key 0: %v", spec.Name, err)
	}
	if uint64(len(val)) >= maxRegionSize {
		return 0, v.fail(i, "map %s: value of %d bytes is too large", spec.Name, len(val))
	}
	name := regionName(spec)
	s := &v.p.static
	s.rd = append(s.rd, val)
	w := val
	if spec.ReadOnly() {
		w = nil
	}
	s.wr = append(s.wr, w)
	// A global section of the runtime's own maps is written only under
	// its lock; one a Map of the host's gives (memory a kernel map
	// shares) may be written at any time.
	if _, ok := m.(SharedMap); !ok {
		w = nil
	}
	s.own = append(s.own, ownable(w))
	s.names = append(s.names, name)
	r := uint32(len(s.rd) - 1)
	v.valueRegion[idx] = r
	return r, nil
}

// checkFormats checks the format of each call of the built-in snprintf as
// the kernel's verifier does at load: r3 must be the address of a
// NUL-terminated string in a read-only map's value, a format of r5/8
// arguments that bpf_bprintf_prepare accepts (see format), and r5 a
// multiple of 8. The check
// finds r3 and r5 in the straight-line code before the call, as clang
// sets them (lddw of the map value, perhaps moved or offset, and mov of
// the size); a call whose r3 or r5 it does not find there has its format
// checked when it runs.
func (v *validator) checkFormats(joins, tail []bool) error {
	for _, i := range v.formats {
		f, ok := v.constBefore(i, 3, joins, tail)
		size, ok5 := v.constBefore(i, 5, joins, tail)
		if !ok || !ok5 || !f.mapValue || size.off < 0 {
			continue
		}
		if size.off%8 != 0 {
			return v.fail(i, "snprintf: data_len %d is not a multiple of 8", size.off)
		}
		mp := v.p.maps[f.mapIdx]
		if !mp.Spec().ReadOnly() {
			return v.fail(i, "snprintf: the format is in map %s, which is not read-only", mp.Spec().Name)
		}
		val, err := mp.Lookup(make([]byte, mp.Spec().KeySize))
		if err != nil {
			continue
		}
		if f.off < 0 || f.off >= int64(len(val)) {
			return v.fail(i, "snprintf: format offset %d is outside the value of map %s", f.off, mp.Spec().Name)
		}
		s := val[f.off:]
		end := bytes.IndexByte(s, 0)
		if end < 0 {
			return v.fail(i, "snprintf: the format at offset %d of map %s has no NUL", f.off, mp.Spec().Name)
		}
		if err := CheckFormat(s[:end], int(size.off/8)); err != nil {
			return v.fail(i, "snprintf: format %q: %v", s[:end], err)
		}
	}
	return nil
}

// constant is a register's value known at load: a number, or the address
// of a map's value (map index and offset).
type constant struct {
	mapValue bool
	mapIdx   int
	off      int64
}

// constBefore finds the value of register r at instruction i from the
// straight-line code before it: lddw of a number or map value, mov of an
// immediate (64 or 32 bits), mov from another register and add of an
// immediate. It stops
// at anything else that writes the register and where another path joins.
func (v *validator) constBefore(i int, r uint8, joins, tail []bool) (constant, bool) {
	raw := v.spec.Instructions
	var add int64
	for j := i; !joins[j]; {
		j--
		if tail[j] {
			j--
		}
		in := raw[j]
		switch {
		case in.Opcode == OpLddw && in.Dst == r:
			hi := raw[j+1].Imm
			switch in.Src {
			case 0:
				return constant{off: int64(uint64(uint32(in.Imm))|uint64(uint32(hi))<<32) + add}, true
			case PseudoMapValue, PseudoMapIdxValue:
				return constant{mapValue: true, mapIdx: int(in.Imm), off: int64(hi) + add}, true
			}
			return constant{}, false
		case in.Opcode == OpMovImm && in.Dst == r:
			return constant{off: int64(in.Imm) + add}, true
		case in.Opcode == OpMov32Imm && in.Dst == r:
			return constant{off: int64(uint32(in.Imm)) + add}, true
		case in.Opcode == OpMovReg && in.Dst == r:
			r = in.Src
		case in.Opcode == OpAddImm && in.Dst == r:
			add += int64(in.Imm)
		case writes(in, r), in.Opcode == OpExit, in.Opcode == OpJa, in.Opcode == OpJa32:
			return constant{}, false
		}
	}
	return constant{}, false
}

// writes reports whether in may write register r.
func writes(in Instruction, r uint8) bool {
	switch in.Opcode & 7 {
	case classALU, classALU64, classLD, classLDX:
		return in.Dst == r
	case classSTX:
		return in.Opcode&0xe0 == modeATOMIC && (in.Src == r || r == 0)
	case classJMP, classJMP32:
		return in.Opcode&0xf0 == jmpCALL && r <= 5
	}
	return false
}
