package bridge

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
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
	return ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
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
