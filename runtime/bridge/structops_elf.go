package bridge

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

// The sections of struct_ops maps: libbpf registers those of .struct_ops
// by updating the map's element, those of .struct_ops.link through a
// link. cilium/ebpf reads only .struct_ops.link.
const (
	structOpsSection     = ".struct_ops"
	structOpsLinkSection = ".struct_ops.link"
)

// structOpsAsLink returns data with its .struct_ops section, and the BTF
// data section describing it, renamed .struct_ops.link, in a copy:
// cilium/ebpf refuses .struct_ops and looks both up by name. The renamed
// copy appends to the file a copy of the section-name string table and of
// the .BTF section, each with the new name added at its end, and points
// the section headers at them (every other name keeps its offset, every
// type its id, so .BTF.ext stays valid). data without a .struct_ops
// section is returned as it is.
func structOpsAsLink(f *elf.File, data []byte) ([]byte, error) {
	sec, link := -1, false
	for i, s := range f.Sections {
		switch s.Name {
		case structOpsSection:
			sec = i
		case structOpsLinkSection:
			link = true
		}
	}
	if sec < 0 {
		return data, nil
	}
	if link {
		return nil, errors.New("sections .struct_ops and .struct_ops.link in one object: skelgen loads the maps of .struct_ops as those of .struct_ops.link, and cilium/ebpf reads one such section; put them all in .struct_ops.link")
	}
	b := readRawBTF(f, data)
	if b == nil {
		return nil, errors.New("section .struct_ops: the object has no readable .BTF section, which struct_ops maps need")
	}
	dss := b.datasecs(structOpsSection)
	if len(dss) == 0 {
		return nil, errors.New("section .struct_ops: no BTF data section describes it")
	}
	// The ELF64 header: e_shoff, e_shentsize, e_shstrndx.
	if len(data) < 64 {
		return nil, errors.New("truncated ELF header")
	}
	order := f.ByteOrder
	shoff, shentsize, shstrndx := order.Uint64(data[40:]), uint64(order.Uint16(data[58:])), int(order.Uint16(data[62:]))
	n := uint64(len(f.Sections))
	if shentsize != 64 || shoff > uint64(len(data)) || n > (uint64(len(data))-shoff)/64 || shstrndx >= len(f.Sections) {
		return nil, errors.New("section .struct_ops: malformed section headers")
	}
	names := f.Sections[shstrndx]
	if names.Offset+names.Size < names.Offset || names.Offset+names.Size > uint64(len(data)) {
		return nil, errors.New("section .struct_ops: malformed section-name table")
	}
	btfIndex := -1
	for i, s := range f.Sections {
		if s == b.sec {
			btfIndex = i
		}
	}
	newName := append([]byte(structOpsLinkSection), 0)
	if uint64(len(b.strs)) > 1<<32-uint64(len(newName)) {
		return nil, fmt.Errorf("section .BTF: string table of %d bytes", len(b.strs))
	}
	out := bytes.Clone(data)
	// place appends parts at the end of out, 8-byte aligned, and points
	// section i's header at them.
	place := func(i int, parts ...[]byte) uint64 {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		at := uint64(len(out))
		for _, p := range parts {
			out = append(out, p...)
		}
		h := shoff + uint64(i)*shentsize
		order.PutUint64(out[h+24:], at)                  // sh_offset
		order.PutUint64(out[h+32:], uint64(len(out))-at) // sh_size
		return at
	}
	place(shstrndx, data[names.Offset:names.Offset+names.Size], newName)
	order.PutUint32(out[shoff+uint64(sec)*shentsize:], uint32(names.Size)) // sh_name
	// The .BTF copy: its header, types then strings.
	hdr := bytes.Clone(b.hdr)
	order.PutUint32(hdr[8:], 0)
	order.PutUint32(hdr[12:], uint32(len(b.types)))
	order.PutUint32(hdr[16:], uint32(len(b.types)))
	order.PutUint32(hdr[20:], uint32(len(b.strs)+len(newName)))
	at := place(btfIndex, hdr, b.types, b.strs, newName)
	for _, ds := range dss {
		order.PutUint32(out[at+uint64(len(hdr))+ds.at:], uint32(len(b.strs)))
	}
	return out, nil
}
