package bridge

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// rawBTF is an object's .BTF section as linux/btf.h lays it out, for the
// changes ParseObject makes before cilium/ebpf reads the types, which
// cilium/ebpf offers no way to make: a header, the type section (each
// type's kind, name and the size of what follows it) and the string
// section.
type rawBTF struct {
	sec         *elf.Section
	order       binary.ByteOrder
	hdr         []byte
	types, strs []byte
	typeOff     uint64 // of types in the section
	// entries are the types by id; id 0 is void.
	entries []btfEntry
}

type btfEntry struct {
	kind uint32
	at   uint64 // offset of the entry in types
}

const (
	btfKindVolatile, btfKindConst, btfKindRestrict = 9, 10, 11
	btfKindVar, btfKindDatasec, btfKindTypeTag     = 14, 15, 18
)

// readRawBTF reads the .BTF section of f, whose bytes are data; nil when
// there is none or it is malformed (cilium/ebpf reports that).
func readRawBTF(f *elf.File, data []byte) *rawBTF {
	s := f.Section(".BTF")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Offset+s.Size < s.Offset || s.Offset+s.Size > uint64(len(data)) || s.Size < 24 {
		return nil
	}
	raw := data[s.Offset : s.Offset+s.Size]
	b := &rawBTF{sec: s, order: f.ByteOrder}
	u32 := func(b []byte, at uint64) uint32 { return f.ByteOrder.Uint32(b[at:]) }
	hdrLen := uint64(u32(raw, 4))
	if f.ByteOrder.Uint16(raw) != 0xeb9f || hdrLen < 24 || hdrLen > uint64(len(raw)) {
		return nil
	}
	typeOff, typeLen := hdrLen+uint64(u32(raw, 8)), uint64(u32(raw, 12))
	strOff, strLen := hdrLen+uint64(u32(raw, 16)), uint64(u32(raw, 20))
	if typeOff+typeLen > uint64(len(raw)) || strOff+strLen > uint64(len(raw)) {
		return nil
	}
	b.hdr, b.typeOff = raw[:hdrLen], typeOff
	b.types, b.strs = raw[typeOff:typeOff+typeLen], raw[strOff:strOff+strLen]
	b.entries = []btfEntry{{}}
	for at := uint64(0); at+12 <= uint64(len(b.types)); {
		info := u32(b.types, at+4)
		kind, vlen := info>>24&0x1f, uint64(info&0xffff)
		b.entries = append(b.entries, btfEntry{kind, at})
		var extra uint64
		switch kind {
		case 1, btfKindVar, 17: // int, var, decl tag
			extra = 4
		case 3: // array
			extra = 12
		case 4, 5, btfKindDatasec, 19: // struct, union, datasec, enum64
			extra = 12 * vlen
		case 6, 13: // enum, func proto
			extra = 8 * vlen
		case 2, 7, 8, btfKindVolatile, btfKindConst, btfKindRestrict, 12, 16, btfKindTypeTag:
		default:
			return nil
		}
		at += 12 + extra
	}
	return b
}

// u32 reads the type section at offset at.
func (b *rawBTF) u32(at uint64) uint32 { return b.order.Uint32(b.types[at:]) }

// name is the name of the type e.
func (b *rawBTF) name(e btfEntry) string {
	off := uint64(b.u32(e.at))
	if off >= uint64(len(b.strs)) {
		return ""
	}
	n, _, _ := bytes.Cut(b.strs[off:], []byte{0})
	return string(n)
}

// datasecs are the entries of the data sections named name.
func (b *rawBTF) datasecs(name string) []btfEntry {
	var out []btfEntry
	for _, e := range b.entries[1:] {
		if e.kind == btfKindDatasec && b.name(e) == name {
			out = append(out, e)
		}
	}
	return out
}
