package bridge

import (
	"bytes"
	"debug/elf"
)

// constVoidKsyms returns the file offsets of the type fields of the .ksyms
// variables declared extern const void sym __ksym (libbpf's spelling of a
// typeless kernel symbol), which clang types const void: cilium/ebpf takes
// only a plain void there, and ParseObject writes 0 (void) into them in
// its copy of the object. A malformed .BTF section gives none: cilium/ebpf
// reports it.
//
// cilium/ebpf offers no way to change a type before it checks the .ksyms
// section, so this reads the raw type section: for each type, its kind,
// its type field and the size of what follows it (the BTF format of
// linux/btf.h).
func constVoidKsyms(f *elf.File, data []byte) []uint64 {
	s := f.Section(".BTF")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Offset+s.Size > uint64(len(data)) || s.Size < 24 {
		return nil
	}
	raw := data[s.Offset : s.Offset+s.Size]
	order := f.ByteOrder
	u32 := func(b []byte, at uint64) uint32 { return order.Uint32(b[at:]) }
	hdrLen := uint64(u32(raw, 4))
	if order.Uint16(raw) != 0xeb9f || hdrLen < 24 || hdrLen > uint64(len(raw)) {
		return nil
	}
	typeOff, typeLen := hdrLen+uint64(u32(raw, 8)), uint64(u32(raw, 12))
	strOff, strLen := hdrLen+uint64(u32(raw, 16)), uint64(u32(raw, 20))
	if typeOff+typeLen > uint64(len(raw)) || strOff+strLen > uint64(len(raw)) {
		return nil
	}
	types, strs := raw[typeOff:typeOff+typeLen], raw[strOff:strOff+strLen]
	const (
		kindVolatile, kindConst, kindRestrict = 9, 10, 11
		kindVar, kindDatasec, kindTypeTag     = 14, 15, 18
	)
	type entry struct {
		kind uint32
		at   uint64 // offset of the entry in types
	}
	all := []entry{{}} // id 0 is void
	var ksyms uint64
	found := false
	for at := uint64(0); at+12 <= uint64(len(types)); {
		name, info := u32(types, at), u32(types, at+4)
		kind, vlen := info>>24&0x1f, uint64(info&0xffff)
		all = append(all, entry{kind, at})
		if kind == kindDatasec && uint64(name) < uint64(len(strs)) {
			if n, _, _ := bytes.Cut(strs[name:], []byte{0}); string(n) == ".ksyms" {
				ksyms, found = at, true
			}
		}
		var extra uint64
		switch kind {
		case 1, kindVar, 17: // int, var, decl tag
			extra = 4
		case 3: // array
			extra = 12
		case 4, 5, kindDatasec, 19: // struct, union, datasec, enum64
			extra = 12 * vlen
		case 6, 13: // enum, func proto
			extra = 8 * vlen
		case 2, 7, 8, kindVolatile, kindConst, kindRestrict, 12, 16, kindTypeTag:
		default:
			return nil
		}
		at += 12 + extra
	}
	if !found {
		return nil
	}
	// voidChain reports whether id is void under qualifiers.
	voidChain := func(id uint32) bool {
		for range len(all) {
			if id == 0 {
				return true
			}
			if uint64(id) >= uint64(len(all)) {
				return false
			}
			e := all[id]
			if e.kind != kindConst && e.kind != kindVolatile && e.kind != kindRestrict && e.kind != kindTypeTag {
				return false
			}
			id = u32(types, e.at+8)
		}
		return false
	}
	var out []uint64
	vlen := uint64(u32(types, ksyms+4) & 0xffff)
	for i := range vlen {
		at := ksyms + 12 + 12*i
		if at+4 > uint64(len(types)) {
			return nil
		}
		id := u32(types, at)
		if uint64(id) >= uint64(len(all)) || all[id].kind != kindVar {
			continue
		}
		v := all[id].at
		if t := u32(types, v+8); t != 0 && voidChain(t) {
			out = append(out, s.Offset+typeOff+v+8)
		}
	}
	return out
}
