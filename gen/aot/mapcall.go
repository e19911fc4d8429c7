package aot

import (
	"fmt"

	"github.com/skelgen/skelgen/runtime"
)

// mapSites finds f's calls of map_lookup_elem, map_update_elem and
// map_delete_elem that the runtime can specialise: those the loaded
// program marks (runtime.Program.MapSite: r1 set by an lddw of a map
// handle, r2, and an update's r3, by r10 plus constants, an update's r4 by
// a constant, in the straight-line code before the call) of a hash map or
// an array, as the translation was made with. The direct functions
// (Lookup32, Update64, Delete32, ...) check at run time that the bound
// map is the runtime's own of that kind and key size and the helper the
// built-in one, and decline otherwise, when the translation calls
// LookupAt or CallAt.
func (p *aotProgram) mapSites(f *aotFunc) map[int]runtime.MapSite {
	sites := map[int]runtime.MapSite{}
	for _, pc := range f.body {
		s, ok := p.loaded.MapSite(pc)
		if !ok {
			continue
		}
		switch p.loaded.Maps()[s.Map].Spec().Type {
		case runtime.Hash, runtime.LRUHash, runtime.PerCPUHash, runtime.LRUPerCPUHash, runtime.Array, runtime.PerCPUArray:
			sites[pc] = s
		}
	}
	return sites
}

// directMapCall is the Go call of the direct function for the map call at
// site, with the key (and an update's value) read from the frame fp, and
// the name of the function: Lookup32, Update64, ...
func directMapCall(site runtime.MapSite) string {
	key := leLoad("fp", runtime.StackSize+site.Key, site.KeySize)
	if site.KeySize == 4 {
		key = "uint32(" + key + ")"
	}
	bits := site.KeySize * 8
	switch site.Helper {
	case runtime.HelperMapLookupElem:
		return fmt.Sprintf("m.Lookup%d(%d, %s)", bits, site.Map, key)
	case runtime.HelperMapUpdateElem:
		v := runtime.StackSize + site.Value
		return fmt.Sprintf("m.Update%d(%d, %s, fp[%d:%d], %#x)", bits, site.Map, key, v, v+site.ValueSize, site.Flags)
	}
	return fmt.Sprintf("m.Delete%d(%d, %s)", bits, site.Map, key)
}
