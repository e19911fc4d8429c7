package aot

import (
	"slices"

	"github.com/skelgen/skelgen/runtime"
)

// lookupSite is a call of map_lookup_elem whose map and key the
// translation knows: r1 holds the handle of a hash map of size-byte keys
// or of an array, set by an lddw, and r2 is r10+off, the key inside the
// frame.
type lookupSite struct {
	size int // 4 or 8
	off  int // the key's offset from r10
	mi   int // the map's index in the program
}

// lookupSites finds f's lookups the runtime can specialise: in the
// straight-line code that leads to the call (the walk back stops at a jump
// target, the function's entry or code control cannot fall from), r1's
// last writer is an lddw of a map handle and r2's are "add r2, k" steps
// after "mov r2, r10". The map's kind and key size come from the map the
// translation was made with; Lookup32 and Lookup64 check at run time that
// the bound map is the runtime's own of that key size, and decline
// otherwise, when the translation calls LookupAt.
func (p *aotProgram) lookupSites(f *aotFunc, labels map[int]bool) map[int]lookupSite {
	sites := map[int]lookupSite{}
	for i, pc := range f.body {
		in := p.insns[pc]
		if in.op != runtime.OpCall || in.src != 0 || in.imm != runtime.HelperMapLookupElem {
			continue
		}
		handle, off, ok := p.lookupArgs(f, i, labels)
		if !ok {
			continue
		}
		mp, err := p.loaded.Machine().Map(handle)
		if err != nil || mp == nil {
			continue
		}
		// The map's index, which is the handle's: a map listed twice
		// would leave it in doubt.
		maps := p.loaded.Maps()
		mi := slices.Index(maps, mp)
		if slices.Contains(maps[mi+1:], mp) {
			continue
		}
		spec := mp.Spec()
		switch spec.Type {
		case runtime.Hash, runtime.LRUHash, runtime.PerCPUHash, runtime.LRUPerCPUHash, runtime.Array, runtime.PerCPUArray:
		default:
			continue
		}
		size := int(spec.KeySize)
		if (size == 4 || size == 8) && off >= -runtime.StackSize && off+size <= 0 {
			sites[pc] = lookupSite{size: size, off: off, mi: mi}
		}
	}
	return sites
}

// lookupArgs walks back from the call at f.body[i] for the writers of r1
// and r2 (see lookupSites).
func (p *aotProgram) lookupArgs(f *aotFunc, i int, labels map[int]bool) (handle uint64, off int, ok bool) {
	var r1, r2, base bool // r1 and r2 resolved; r2's mov from r10 seen
	for j := i; j > 0 && !(r1 && base); j-- {
		if pc := f.body[j]; labels[pc] || pc == f.entry || !falls(p.insns[f.body[j-1]]) {
			return 0, 0, false
		}
		in := p.insns[f.body[j-1]]
		def := p.effect(f, in).def
		if in.class() == runtime.ClassJMP || in.class() == runtime.ClassJMP32 {
			if def != 0 {
				return 0, 0, false // a call
			}
			continue
		}
		if def.has(1) && !r1 {
			if in.op != runtime.OpLddw || !in.pseudo || in.src != runtime.PseudoMapFD && in.src != runtime.PseudoMapIdx {
				return 0, 0, false
			}
			handle, r1 = in.imm64, true
		}
		if def.has(2) && !base {
			switch {
			case in.op == runtime.OpAddImm:
				off += int(in.imm)
				if off < -runtime.StackSize || off > 0 {
					return 0, 0, false
				}
			case in.op == runtime.OpMovReg && in.src == 10 && in.off == 0:
				base = true
			default:
				return 0, 0, false
			}
			r2 = true
		}
	}
	return handle, off, r1 && r2 && base
}
