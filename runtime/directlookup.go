//skelgen:vm

package runtime

import "encoding/binary"

// directSite is a call of map_lookup_elem whose map and key the code
// before it fixes: r1 holds the handle of map mi, set by an lddw, and r2
// is r10+off, the key of ks bytes inside the frame. ks is 0 for every
// other instruction.
type directSite struct {
	mi  int32
	off int32
	ks  int32
}

// directLookups finds, by instruction, the calls of helper 1 that the
// interpreter may run as Lookup32 or Lookup64, as gen/aot finds them for
// translations: in the straight-line code that leads to the call (the walk
// back stops at a jump target or a function's entry), r1's last writer is
// an lddw of a map handle and r2's are "add r2, k" steps after "mov r2,
// r10", and the map's keys are 4 or 8 bytes that lie in the frame. The
// lookups check the rest at run time. insns are decoded but neither fused
// nor turned into byte distances; it returns nil when no call qualifies.
func directLookups(raw []Instruction, insns []insn, tail, entry []bool, maps []Map) []directSite {
	target := make([]bool, len(insns))
	for i, in := range raw {
		if !tail[i] && isJump(in.Opcode) {
			target[insns[i].off] = true
		}
	}
	var sites []directSite
	for i, in := range raw {
		if tail[i] || in.Opcode != OpCall || in.Src != 0 || in.Imm != HelperMapLookupElem {
			continue
		}
		mi, off, ok := lookupArgs(raw, insns, tail, entry, target, i)
		if !ok || mi >= len(maps) || maps[mi] == nil {
			continue
		}
		ks := int(maps[mi].Spec().KeySize)
		if (ks != 4 && ks != 8) || off < -StackSize || off+ks > 0 {
			continue
		}
		if sites == nil {
			sites = make([]directSite, len(insns))
		}
		sites[i] = directSite{mi: int32(mi), off: int32(off), ks: int32(ks)}
	}
	return sites
}

// LookupSite reports whether the call at insn is a lookup whose map and
// key place the code before it fixes (see directLookups), with the map's
// index, the key's offset from r10 and its size: the calls a translation
// may make through Lookup32 or Lookup64, as the interpreter does.
func (p *Program) LookupSite(insn int) (mapIndex, offset, keySize int, ok bool) {
	if insn < 0 || insn >= len(p.direct) || p.direct[insn].ks == 0 {
		return 0, 0, 0, false
	}
	d := p.direct[insn]
	return int(d.mi), int(d.off), int(d.ks), true
}

// lookupArgs walks back from the call at i for the writers of r1 and r2
// (see directLookups).
func lookupArgs(raw []Instruction, insns []insn, tail, entry, target []bool, i int) (mi, off int, ok bool) {
	var r1, base bool // r1 resolved; r2's mov from r10 seen
	for k := i; !(r1 && base); {
		j := k - 1
		if j >= 0 && tail[j] {
			j--
		}
		if j < 0 || target[k] || entry[k] {
			return 0, 0, false
		}
		in := raw[j]
		switch c := in.Opcode & 7; {
		case in.Opcode == OpExit || in.Opcode == OpJa || in.Opcode == OpJa32:
			return 0, 0, false // control does not fall from j to k
		case c == classJMP || c == classJMP32:
			if in.Opcode&0xf0 == jmpCALL {
				return 0, 0, false // a call sets r0 and may clobber r1..r5
			}
		case c == classSTX && (in.Opcode&0xe0 == 0xc0) && in.Imm&1 != 0 && (in.Src == 1 || in.Src == 2):
			return 0, 0, false // an atomic fetching into r1 or r2
		case c == classST || c == classSTX:
		case in.Dst == 1 && !r1:
			if in.Opcode != OpLddw || in.Src != PseudoMapFD && in.Src != PseudoMapIdx {
				return 0, 0, false
			}
			mi, r1 = int(uint64(insns[j].imm)>>32-tagMap), true
		case in.Dst == 2 && !base:
			switch {
			case in.Opcode == OpAddImm:
				off += int(in.Imm)
				if off < -StackSize || off > 0 {
					return 0, 0, false
				}
			case in.Opcode == OpMovReg && in.Src == 10 && in.Offset == 0:
				base = true
			default:
				return 0, 0, false
			}
		}
		k = j
	}
	return mi, off, base
}

// directLookup runs the call at site as Lookup32 or Lookup64 would,
// reading the key from the current frame.
func (m *Machine) directLookup(site directSite) (uint64, bool) {
	k := m.stack[m.depth*StackSize+StackSize+int(site.off):]
	if site.ks == 4 {
		return m.Lookup32(int(site.mi), binary.LittleEndian.Uint32(k))
	}
	return m.Lookup64(int(site.mi), binary.LittleEndian.Uint64(k))
}
