package bridge

import (
	"debug/elf"
)

// constVoidKsyms returns the file offsets of the type fields of the .ksyms
// variables declared extern const void sym __ksym (libbpf's spelling of a
// typeless kernel symbol), which clang types const void: cilium/ebpf takes
// only a plain void there, and ParseObject writes 0 (void) into them in
// its copy of the object. A malformed .BTF section gives none: cilium/ebpf
// reports it.
func constVoidKsyms(f *elf.File, data []byte) []uint64 {
	b := readRawBTF(f, data)
	if b == nil {
		return nil
	}
	secs := b.datasecs(".ksyms")
	if len(secs) == 0 {
		return nil
	}
	ksyms := secs[len(secs)-1].at
	// voidChain reports whether id is void under qualifiers.
	voidChain := func(id uint32) bool {
		for range len(b.entries) {
			if id == 0 {
				return true
			}
			if uint64(id) >= uint64(len(b.entries)) {
				return false
			}
			e := b.entries[id]
			if e.kind != btfKindConst && e.kind != btfKindVolatile && e.kind != btfKindRestrict && e.kind != btfKindTypeTag {
				return false
			}
			id = b.u32(e.at + 8)
		}
		return false
	}
	var out []uint64
	vlen := uint64(b.u32(ksyms+4) & 0xffff)
	for i := range vlen {
		at := ksyms + 12 + 12*i
		if at+4 > uint64(len(b.types)) {
			return nil
		}
		id := b.u32(at)
		if uint64(id) >= uint64(len(b.entries)) || b.entries[id].kind != btfKindVar {
			continue
		}
		v := b.entries[id].at
		if t := b.u32(v + 8); t != 0 && voidChain(t) {
			out = append(out, b.sec.Offset+b.typeOff+v+8)
		}
	}
	return out
}
