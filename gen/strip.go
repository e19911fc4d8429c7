package gen

import (
	"bytes"
	"debug/elf"
	"fmt"
	"strings"
)

// StripDWARF returns the object without its DWARF, as llvm-strip -g
// writes it: the .debug_* sections, the relocation sections that apply to
// them, the symbols defined in them and .llvm_addrsig (a linker hint that
// names symbols by index) are removed; code, maps, .BTF and .BTF.ext (with
// the line info the verifier prints) are kept byte for byte, with section
// and symbol indices renumbered where they point. An object without DWARF
// is returned unchanged.
//
// clang's DWARF is most of a BPF object's size and loading needs none of
// it. skelgen strips objects it compiles with llvm-strip; this covers
// prebuilt objects without depending on an LLVM install.
func StripDWARF(name string, data []byte) ([]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || len(data) < 0x40 {
		return data, nil
	}
	order := f.ByteOrder
	shoff := order.Uint64(data[0x28:])
	phnum := order.Uint16(data[0x38:])
	const shentsize = 64
	if phnum != 0 || order.Uint16(data[0x3a:]) != shentsize || len(f.Sections) == 0 {
		// Not a relocatable object as clang writes it: keep it as is.
		return data, nil
	}
	n := len(f.Sections)
	if shoff > uint64(len(data)) || uint64(len(data))-shoff < uint64(n)*shentsize {
		return nil, fmt.Errorf("%s: section headers truncated", name)
	}
	drop := make([]bool, n)
	found := false
	for i, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") {
			drop[i], found = true, true
		}
	}
	if !found {
		return data, nil
	}
	for i, s := range f.Sections {
		switch {
		case (s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA) && int(s.Info) < n && drop[s.Info]:
			drop[i] = true
		case s.Name == ".llvm_addrsig":
			drop[i] = true
		}
	}
	newIndex := make([]uint32, n)
	next := uint32(0)
	for i := range f.Sections {
		if !drop[i] {
			newIndex[i] = next
			next++
		}
	}
	remap := func(idx uint32) uint32 {
		if idx > 0 && int(idx) < n && idx < uint32(elf.SHN_LORESERVE) {
			return newIndex[idx]
		}
		return idx
	}

	contents := make([][]byte, n)
	for i, s := range f.Sections {
		if drop[i] || s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset > uint64(len(data)) || uint64(len(data))-s.Offset < s.Size {
			return nil, fmt.Errorf("%s: section %q: truncated", name, s.Name)
		}
		contents[i] = append([]byte(nil), data[s.Offset:s.Offset+s.Size]...)
	}

	// Symbols defined in removed sections go; the others are renumbered.
	symNew := map[uint32]uint32{}
	symtab := -1
	// sh_info of a symbol table: one past its last local symbol.
	var symLocals uint32
	for i, s := range f.Sections {
		if s.Type != elf.SHT_SYMTAB || drop[i] {
			continue
		}
		if symtab >= 0 {
			return nil, fmt.Errorf("%s: two symbol tables", name)
		}
		symtab = i
		const symSize = 24
		old := contents[i]
		var kept []byte
		locals := uint32(0)
		for k := 0; k+symSize <= len(old); k += symSize {
			sym := old[k : k+symSize]
			shndx := uint32(order.Uint16(sym[6:]))
			if k > 0 && shndx > 0 && int(shndx) < n && shndx < uint32(elf.SHN_LORESERVE) && drop[shndx] {
				continue
			}
			e := append([]byte(nil), sym...)
			order.PutUint16(e[6:], uint16(remap(shndx)))
			symNew[uint32(k/symSize)] = uint32(len(kept) / symSize)
			if elf.ST_BIND(e[4]) == elf.STB_LOCAL {
				locals++
			}
			kept = append(kept, e...)
		}
		contents[i] = kept
		symLocals = locals
	}
	for i, s := range f.Sections {
		if drop[i] || (s.Type != elf.SHT_REL && s.Type != elf.SHT_RELA) {
			continue
		}
		if int(s.Link) != symtab {
			return nil, fmt.Errorf("%s: section %q: relocations against section %d, not the symbol table", name, s.Name, s.Link)
		}
		size := 16
		if s.Type == elf.SHT_RELA {
			size = 24
		}
		b := contents[i]
		for k := 0; k+size <= len(b); k += size {
			info := order.Uint64(b[k+8:])
			sym, ok := symNew[uint32(info>>32)]
			if !ok {
				return nil, fmt.Errorf("%s: section %q: relocation %d names a removed symbol", name, s.Name, k/size)
			}
			order.PutUint64(b[k+8:], uint64(sym)<<32|info&0xffffffff)
		}
	}

	// The ELF header, each kept section's contents at its alignment, then
	// the section header table.
	out := bytes.NewBuffer(make([]byte, 0, len(data)/4))
	out.Write(data[:0x40])
	offsets := make([]uint64, n)
	for i, s := range f.Sections {
		if drop[i] {
			continue
		}
		if i == 0 || s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			offsets[i] = s.Offset
			continue
		}
		if s.Addralign > 1<<12 {
			return nil, fmt.Errorf("%s: section %q: alignment %d", name, s.Name, s.Addralign)
		}
		pad(out, max(s.Addralign, 1))
		offsets[i] = uint64(out.Len())
		out.Write(contents[i])
	}
	pad(out, 8)
	newShoff := uint64(out.Len())
	for i, s := range f.Sections {
		if drop[i] {
			continue
		}
		h := append([]byte(nil), data[shoff+uint64(i)*shentsize:shoff+uint64(i+1)*shentsize]...)
		order.PutUint32(h[0x28:], remap(order.Uint32(h[0x28:]))) // sh_link
		switch {
		case s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA:
			order.PutUint32(h[0x2c:], remap(s.Info))
		case i == symtab:
			order.PutUint32(h[0x2c:], symLocals)
		}
		order.PutUint64(h[0x18:], offsets[i])
		if contents[i] != nil {
			order.PutUint64(h[0x20:], uint64(len(contents[i])))
		}
		out.Write(h)
	}
	b := out.Bytes()
	order.PutUint64(b[0x28:], newShoff)
	order.PutUint16(b[0x3c:], uint16(next))
	order.PutUint16(b[0x3e:], uint16(remap(uint32(order.Uint16(data[0x3e:])))))
	// The rewrite assumes an object laid out as compilers write it; a
	// malformed one the rules above miss (a section name table among the
	// removed sections, a SHT_NULL section with contents) must give an
	// error, never an object nothing can read.
	sf, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: malformed object: removing its DWARF leaves no readable ELF (%v)", name, err)
	}
	sf.Close()
	return b, nil
}

func pad(b *bytes.Buffer, align uint64) {
	for uint64(b.Len())%align != 0 {
		b.WriteByte(0)
	}
}
