package bridge

import (
	"bytes"
	"debug/elf"
	"fmt"

	"github.com/cilium/ebpf"
)

// MaxSectionSize bounds the sections of an object LoadSpec accepts. A
// section without file contents (.bss) declares its size in the header
// alone, and cilium/ebpf allocates that much; the kernel's limit on a map
// value is far below this.
const MaxSectionSize = 64 << 20

// LoadSpec parses a BPF object from untrusted bytes: it rejects sections
// larger than MaxSectionSize, then reads it with cilium/ebpf.
func LoadSpec(data []byte) (*ebpf.CollectionSpec, error) {
	if err := CheckSections(data); err != nil {
		return nil, err
	}
	return ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
}

// CheckSections rejects an ELF object with a section larger than
// MaxSectionSize. Input that is not ELF is left to the caller's parser.
func CheckSections(data []byte) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Size > MaxSectionSize {
			return fmt.Errorf("section %s: %d bytes, more than the %d a BPF object section may have", s.Name, s.Size, MaxSectionSize)
		}
	}
	return nil
}
