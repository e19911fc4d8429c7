package runtime

import "encoding/binary"

// directSite is a call of map_lookup_elem, map_update_elem or
// map_delete_elem (fn, the helper id) whose arguments the code before it
// fixes: r1 holds the handle of map mi, set by an lddw, and r2 is r10+off,
// the key of ks bytes inside the frame; for an update, r3 is r10+voff, the
// value of vs bytes inside the frame, and r4 the constant flags. ks is 0
// for every other instruction.
type directSite struct {
	mi    int32
	off   int32
	ks    int32
	fn    int32
	voff  int32
	vs    int32
	flags uint64
}

// directSites finds, by instruction, the calls of helpers 1, 2 and 3 that
// the interpreter may run as Lookup32 or Lookup64, Update32 or Update64,
// Delete32 or Delete64, as gen/aot finds them for translations (it asks
// the loaded program, Program.MapSite): in the straight-line code that
// leads to the call (the walk back stops at a jump target or a function's
// entry), r1's last writer is an lddw of a map handle, r2's (and for an
// update r3's) are "add rN, k" steps after "mov rN, r10", an update's r4
// is set by a mov of a constant, and the map's keys are 4 or 8 bytes that
// lie in the frame, as does an update's value. The direct functions check
// the rest at run time. insns are decoded but neither fused nor turned
// into byte distances; it returns nil when no call qualifies.
func directSites(raw []Instruction, insns []insn, tail, entry []bool, maps []Map) []directSite {
	target := make([]bool, len(insns))
	for i, in := range raw {
		if !tail[i] && isJump(in.Opcode) {
			target[insns[i].off] = true
		}
	}
	inFrame := func(off, n int) bool { return off >= -StackSize && off+n <= 0 }
	var sites []directSite
	for i, in := range raw {
		if tail[i] || in.Opcode != OpCall || in.Src != 0 {
			continue
		}
		args := 2
		switch in.Imm {
		case HelperMapLookupElem, HelperMapDeleteElem:
		case HelperMapUpdateElem:
			args = 4
		default:
			continue
		}
		a, ok := callArgs(raw, insns, tail, entry, target, i, args)
		if !ok || a.mi >= len(maps) || maps[a.mi] == nil {
			continue
		}
		spec := maps[a.mi].Spec()
		ks, vs := int(spec.KeySize), int(spec.ValueSize)
		if (ks != 4 && ks != 8) || !inFrame(a.off[2], ks) || args == 4 && !inFrame(a.off[3], vs) {
			continue
		}
		if sites == nil {
			sites = make([]directSite, len(insns))
		}
		d := directSite{mi: int32(a.mi), off: int32(a.off[2]), ks: int32(ks), fn: in.Imm}
		if args == 4 {
			d.voff, d.vs, d.flags = int32(a.off[3]), int32(vs), a.flags
		}
		sites[i] = d
	}
	return sites
}

// MapSite is a call of map_lookup_elem, map_update_elem or map_delete_elem
// whose arguments the straight-line code before it fixes (see
// Program.MapSite).
type MapSite struct {
	Helper  int // HelperMapLookupElem, HelperMapUpdateElem or HelperMapDeleteElem
	Map     int // the map's index in the program
	Key     int // the key's offset from r10
	KeySize int // 4 or 8
	// An update's value: its offset from r10 and size (the map's value
	// size), and the update's flags (r4).
	Value, ValueSize int
	Flags            uint64
}

// MapSite reports whether the call at insn is a lookup, update or delete
// whose map, key place (and an update's value place and flags) the code
// before it fixes (see directSites): the calls a translation may make
// through Lookup32 or Lookup64, Update32 or Update64, Delete32 or Delete64,
// as the interpreter does.
func (p *Program) MapSite(insn int) (MapSite, bool) {
	if insn < 0 || insn >= len(p.direct) || p.direct[insn].ks == 0 {
		return MapSite{}, false
	}
	d := p.direct[insn]
	return MapSite{Helper: int(d.fn), Map: int(d.mi), Key: int(d.off), KeySize: int(d.ks), Value: int(d.voff), ValueSize: int(d.vs), Flags: d.flags}, true
}

// siteArgs are the arguments callArgs found: the map's index, by register
// the offset from r10 that r2 and r3 hold, and r4.
type siteArgs struct {
	mi    int
	off   [4]int
	flags uint64
}

// callArgs walks back from the call at i for the writers of r1 up to rn,
// n 2 or 4 (see directSites).
func callArgs(raw []Instruction, insns []insn, tail, entry, target []bool, i, n int) (a siteArgs, ok bool) {
	var done [5]bool // by register: resolved (r2, r3: their mov from r10 seen)
	for r := n + 1; r < len(done); r++ {
		done[r] = true
	}
	for k := i; !(done[1] && done[2] && done[3] && done[4]); {
		j := k - 1
		if j >= 0 && tail[j] {
			j--
		}
		if j < 0 || target[k] || entry[k] {
			return a, false
		}
		in := raw[j]
		switch c := in.Opcode & 7; {
		case in.Opcode == OpExit || in.Opcode == OpJa || in.Opcode == OpJa32:
			return a, false // control does not fall from j to k
		case c == classJMP || c == classJMP32:
			if in.Opcode&0xf0 == jmpCALL {
				return a, false // a call sets r0 and may clobber r1..r5
			}
		case c == classSTX && (in.Opcode&0xe0 == 0xc0) && in.Imm&1 != 0 && in.Src >= 1 && int(in.Src) <= n:
			return a, false // an atomic fetching into an argument
		case c == classST || c == classSTX:
		case in.Dst < 1 || in.Dst > 4 || done[in.Dst]:
		case in.Dst == 1:
			if in.Opcode != OpLddw || in.Src != PseudoMapFD && in.Src != PseudoMapIdx {
				return a, false
			}
			a.mi, done[1] = int(uint64(insns[j].imm)>>32-tagMap), true
		case in.Dst == 4:
			switch in.Opcode {
			case OpMovImm:
				a.flags = uint64(int64(in.Imm))
			case OpMov32Imm:
				a.flags = uint64(uint32(in.Imm))
			default:
				return a, false
			}
			done[4] = true
		default: // r2 or r3: a place in the frame
			r := in.Dst
			switch {
			case in.Opcode == OpAddImm:
				a.off[r] += int(in.Imm)
				if a.off[r] < -StackSize || a.off[r] > 0 {
					return a, false
				}
			case in.Opcode == OpMovReg && in.Src == 10 && in.Offset == 0:
				done[r] = true
			default:
				return a, false
			}
		}
		k = j
	}
	return a, true
}

// directCall runs the call at site as the direct function of its helper
// would (Lookup32, Update64, ...), reading the key and an update's value
// from the current frame. ok is false when the function declines.
func (m *Machine) directCall(site directSite) (r0 uint64, ok bool) {
	top := m.depth*StackSize + StackSize
	k := m.stack[top+int(site.off):]
	switch site.fn {
	case HelperMapLookupElem:
		if site.ks == 4 {
			return m.Lookup32(int(site.mi), binary.LittleEndian.Uint32(k))
		}
		return m.Lookup64(int(site.mi), binary.LittleEndian.Uint64(k))
	case HelperMapUpdateElem:
		v := m.stack[top+int(site.voff) : top+int(site.voff+site.vs)]
		if site.ks == 4 {
			return m.Update32(int(site.mi), binary.LittleEndian.Uint32(k), v, site.flags)
		}
		return m.Update64(int(site.mi), binary.LittleEndian.Uint64(k), v, site.flags)
	}
	if site.ks == 4 {
		return m.Delete32(int(site.mi), binary.LittleEndian.Uint32(k))
	}
	return m.Delete64(int(site.mi), binary.LittleEndian.Uint64(k))
}
