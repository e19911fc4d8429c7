package aot

import "github.com/skelgen/skelgen/runtime"

// lookupSite is a call of map_lookup_elem whose map and key the
// translation knows: r1 holds the handle of a hash map of size-byte keys
// or of an array, set by an lddw, and r2 is r10+off, the key inside the
// frame.
type lookupSite struct {
	size int // 4 or 8
	off  int // the key's offset from r10
	mi   int // the map's index in the program
}

// lookupSites finds f's lookups the runtime can specialise: those the
// loaded program marks (runtime.Program.MapSite: r1 set by an lddw of a
// map handle and r2 by r10 plus constants, in the straight-line code before
// the call) of a hash map or an array, as the translation was made with.
// Lookup32 and Lookup64 check at run time that the bound map is the
// runtime's own of that kind and key size, and decline otherwise, when the
// translation calls LookupAt.
func (p *aotProgram) lookupSites(f *aotFunc) map[int]lookupSite {
	sites := map[int]lookupSite{}
	for _, pc := range f.body {
		s, ok := p.loaded.MapSite(pc)
		if !ok || s.Helper != runtime.HelperMapLookupElem {
			continue
		}
		switch p.loaded.Maps()[s.Map].Spec().Type {
		case runtime.Hash, runtime.LRUHash, runtime.PerCPUHash, runtime.LRUPerCPUHash, runtime.Array, runtime.PerCPUArray:
			sites[pc] = lookupSite{size: s.KeySize, off: s.Key, mi: s.Map}
		}
	}
	return sites
}
