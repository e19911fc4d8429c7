package bridge

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// MaxSectionSize bounds the sections of an object LoadSpec accepts. A
// section without file contents (.bss) declares its size in the header
// alone, and cilium/ebpf allocates that much; the kernel's limit on a map
// value is far below this.
const MaxSectionSize = 64 << 20

// LoadSpec parses a BPF object from untrusted bytes: CheckObject first,
// then cilium/ebpf reads it.
func LoadSpec(data []byte) (*ebpf.CollectionSpec, error) {
	if err := CheckObject(data); err != nil {
		return nil, err
	}
	return ParseObject(data)
}

// ParseObject parses a BPF object with cilium/ebpf, accepting the __weak
// symbols libbpf accepts and cilium/ebpf refuses: maps defined __weak (as
// libbpf's usdt.bpf.h defines its maps) and __weak .kconfig externs. Their
// bindings are read as global in a copy of data (in one object a weak
// definition is the definition), and each load of a .kconfig extern is
// marked with its name and binding, so that Load gives the externs
// libbpf's meaning (resolveKconfig). Weak ksyms and kfuncs are
// cilium/ebpf's own. Global functions of hidden visibility (__hidden, as
// usdt.bpf.h declares its helpers) are verified as static functions, in
// their callers' context, as libbpf has them verified: their BTF
// linkage is made static. The maps of a .struct_ops section, which
// cilium/ebpf refuses, are read as those of .struct_ops.link
// (structOpsAsLink): StructOps.Attach registers both through a link.
// Programs of the section kinds libbpf added after cilium/ebpf's table
// (newSectionDefs) are given their type as libbpf gives it.
//
// features are the load-time support the object needs beyond what every
// object does (Kconfig): ParseObject makes them available to the loads
// of every object in the process. A skeleton passes those its object
// needs, so that a module's runtime copy keeps the code of a feature only
// where a skeleton names it.
func ParseObject(data []byte, features ...Feature) (*ebpf.CollectionSpec, error) {
	for _, f := range features {
		f.install()
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		// Malformed: cilium/ebpf says how.
		return ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
	}
	defer f.Close()
	ext := readExterns(f, data)
	ext.voidKsyms = constVoidKsyms(f, data)
	patched, err := structOpsAsLink(f, ext.globalized(data))
	if err != nil {
		return nil, err
	}
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(patched))
	if err != nil {
		return nil, err
	}
	for _, p := range spec.Programs {
		ext.mark(p)
		typeNewSection(p)
	}
	return spec, nil
}

// A Feature is load-time support that only some objects need, such as
// Kconfig; see ParseObject.
type Feature struct{ install func() }

// kconfigFuncs is what Kconfig installs (kconfig.go).
type kconfigFuncs struct {
	resolve   func(k *ebpf.CollectionSpec) error
	normalize func(spec *ebpf.CollectionSpec)
}

var kconfigSupport atomic.Pointer[kconfigFuncs]

// kconfigOf returns the support for spec's .kconfig externs: nil when it
// has none, an error when it has some and no skeleton passed Kconfig to
// ParseObject.
func kconfigOf(spec *ebpf.CollectionSpec) (*kconfigFuncs, error) {
	var ds *btf.Datasec
	if spec == nil || spec.Types == nil || spec.Types.TypeByName(kconfigMap, &ds) != nil {
		return nil, nil
	}
	if kc := kconfigSupport.Load(); kc != nil {
		return kc, nil
	}
	return nil, fmt.Errorf("the object reads %s externs, whose values need bridge.Kconfig: pass it to ParseObject, as the object's skeleton does (generate the skeleton again if it does not)", kconfigMap)
}

// objectExterns is what ParseObject reads of an object's symbols.
type objectExterns struct {
	// patch are the offsets of st_info bytes of weak symbols to make global.
	patch []uint64
	// loads are the .kconfig extern each relocated instruction loads, by
	// section and offset.
	loads map[elfPlace]kconfigExtern
	// funcs place each function symbol.
	funcs map[string]elfPlace
	// hidden are the global functions of hidden visibility.
	hidden map[string]bool
	// voidKsyms are the offsets of the type fields to make void
	// (constVoidKsyms).
	voidKsyms []uint64
}

type elfPlace struct {
	section elf.SectionIndex
	offset  uint64
}

// kconfigKey is the metadata key of a kconfigExtern.
type kconfigKey struct{}

// kconfigExtern marks, in an instruction's metadata, a load of the address
// of a .kconfig extern.
type kconfigExtern struct {
	name string
	weak bool
}

// readExterns finds the weak symbols cilium/ebpf refuses (those defined in
// a map section: .maps, maps; and the .kconfig externs) and the
// instructions that load .kconfig externs. A malformed symbol or
// relocation table is left for cilium/ebpf to report.
func readExterns(f *elf.File, data []byte) objectExterns {
	var ext objectExterns
	syms, err := f.Symbols()
	symtab := f.SectionByType(elf.SHT_SYMTAB)
	if err != nil || symtab == nil || symtab.Entsize != elf.Sym64Size {
		return ext
	}
	kconfig := kconfigNames(data)
	ext.funcs = map[string]elfPlace{}
	for i, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			ext.funcs[s.Name] = elfPlace{s.Section, s.Value}
			vis := elf.ST_VISIBILITY(s.Other)
			if elf.ST_BIND(s.Info) != elf.STB_LOCAL && (vis == elf.STV_HIDDEN || vis == elf.STV_INTERNAL) {
				if ext.hidden == nil {
					ext.hidden = map[string]bool{}
				}
				ext.hidden[s.Name] = true
			}
		}
		if elf.ST_BIND(s.Info) != elf.STB_WEAK {
			continue
		}
		undef := s.Section == elf.SHN_UNDEF
		if undef && !kconfig[s.Name] || !undef && (int(s.Section) >= len(f.Sections) || !isMapSection(f.Sections[s.Section].Name)) {
			continue
		}
		// Symbols leaves out the null symbol: s is entry i+1; st_info is
		// the fifth byte of an Elf64_Sym.
		if at := symtab.Offset + uint64(i+1)*elf.Sym64Size + 4; at < uint64(len(data)) {
			ext.patch = append(ext.patch, at)
		}
	}
	if len(kconfig) == 0 {
		return ext
	}
	ext.loads = map[elfPlace]kconfigExtern{}
	for _, rs := range f.Sections {
		if rs.Type != elf.SHT_REL || rs.Info >= uint32(len(f.Sections)) {
			continue
		}
		raw, err := rs.Data()
		if err != nil {
			continue
		}
		for r := 0; r+16 <= len(raw); r += 16 {
			off := f.ByteOrder.Uint64(raw[r:])
			sym := f.ByteOrder.Uint64(raw[r+8:]) >> 32
			if sym == 0 || sym > uint64(len(syms)) {
				continue
			}
			s := syms[sym-1]
			if s.Section != elf.SHN_UNDEF || !kconfig[s.Name] {
				continue
			}
			ext.loads[elfPlace{elf.SectionIndex(rs.Info), off}] = kconfigExtern{s.Name, elf.ST_BIND(s.Info) == elf.STB_WEAK}
		}
	}
	return ext
}

// globalized is data with the weak symbols ext found made global and its
// const void ksyms void, in a copy.
func (ext objectExterns) globalized(data []byte) []byte {
	if len(ext.patch) == 0 && len(ext.voidKsyms) == 0 {
		return data
	}
	out := bytes.Clone(data)
	for _, at := range ext.patch {
		out[at] = byte(elf.ST_INFO(elf.STB_GLOBAL, elf.SymType(out[at]&0xf)))
	}
	for _, at := range ext.voidKsyms {
		clear(out[at : at+4])
	}
	return out
}

// mark sets kconfigExtern on the instructions of p that load .kconfig
// externs, and makes the BTF linkage of p's hidden functions static. cilium/ebpf keeps each function's instructions in their ELF
// order, a function starting at an instruction carrying its symbol, so
// an instruction's place in the ELF is its function's place plus its
// offset in the function.
func (ext objectExterns) mark(p *ebpf.ProgramSpec) {
	var fn elfPlace
	var start asm.RawInstructionOffset
	known := false
	iter := p.Instructions.Iterate()
	for iter.Next() {
		if sym := iter.Ins.Symbol(); sym != "" {
			fn, known = ext.funcs[sym]
			start = iter.Offset
			if f := btf.FuncMetadata(iter.Ins); f != nil && ext.hidden[sym] && f.Linkage != btf.StaticFunc {
				// The Func is the object's own, parsed for this spec.
				f.Linkage = btf.StaticFunc
			}
		}
		if !known || !iter.Ins.IsLoadFromMap() {
			continue
		}
		at := elfPlace{fn.section, fn.offset + uint64(iter.Offset-start)*asm.InstructionSize}
		if e, ok := ext.loads[at]; ok {
			iter.Ins.Metadata.Set(kconfigKey{}, e)
		}
	}
}

// isMapSection reports whether a section holds map definitions.
func isMapSection(name string) bool {
	return name == ".maps" || name == "maps" || strings.HasPrefix(name, "maps/")
}

// kconfigNames are the variables of the .kconfig section of data's BTF.
func kconfigNames(data []byte) map[string]bool {
	names := map[string]bool{}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(data))
	if err != nil {
		return names
	}
	var ds *btf.Datasec
	if spec.TypeByName(kconfigMap, &ds) != nil {
		return names
	}
	for _, v := range ds.Vars {
		names[v.Type.TypeName()] = true
	}
	return names
}

// CheckObject checks that data is a 64-bit BPF ELF object whose sections
// lie inside it and are at most MaxSectionSize each, with an error that
// says which rule failed (the caller adds the file name).
func CheckObject(data []byte) error {
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return errors.New("not an ELF file")
	}
	if len(data) >= 20 {
		// e_machine, read before the section headers so that a truncated
		// object of another machine is still named as such.
		order := binary.ByteOrder(binary.LittleEndian)
		if elf.Data(data[elf.EI_DATA]) == elf.ELFDATA2MSB {
			order = binary.BigEndian
		}
		if m := elf.Machine(order.Uint16(data[18:])); m != elf.EM_BPF {
			return fmt.Errorf("not a BPF object: ELF machine is %v", m)
		}
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("truncated or malformed ELF: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_BPF {
		return fmt.Errorf("not a BPF object: ELF machine is %v", f.Machine)
	}
	if f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("not a BPF object: ELF class is %v", f.Class)
	}
	for _, s := range f.Sections {
		if s.Size > MaxSectionSize {
			return fmt.Errorf("section %s: %d bytes, more than the %d a BPF object section may have", s.Name, s.Size, MaxSectionSize)
		}
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset+s.Size < s.Offset || s.Offset+s.Size > uint64(len(data)) {
			return fmt.Errorf("section %s: truncated (%d bytes at offset %d, file has %d)", s.Name, s.Size, s.Offset, len(data))
		}
	}
	return nil
}
