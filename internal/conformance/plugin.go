package conformance

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// DecodeHex decodes hex text as the suite's runner writes it: byte pairs
// separated by any whitespace, or one unbroken hex string.
func DecodeHex(s string) ([]byte, error) {
	joined := strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(joined)
	if err != nil {
		return nil, fmt.Errorf("hex input: %w", err)
	}
	return b, nil
}

// ELFProgram returns the instruction bytes of the first non-empty executable
// section of a BPF ELF object, converted to little endian if the object is
// big endian. Relocations are not applied: the suite's ELF programs have none.
func ELFProgram(data []byte) ([]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("elf: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_BPF {
		return nil, fmt.Errorf("elf: machine %v, want EM_BPF", f.Machine)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("elf section %s: %w", s.Name, err)
		}
		if len(b)%8 != 0 {
			return nil, fmt.Errorf("elf section %s: size %d is not a multiple of 8", s.Name, len(b))
		}
		if f.ByteOrder == binary.BigEndian {
			b = swapOrder(b)
		}
		return b, nil
	}
	return nil, errors.New("elf: no executable section with code")
}

// swapOrder rewrites big-endian instruction slots as little-endian ones.
func swapOrder(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+8 <= len(b); i += 8 {
		s, d := b[i:i+8], out[i:i+8]
		d[0] = s[0]
		d[1] = s[1]<<4 | s[1]>>4
		binary.LittleEndian.PutUint16(d[2:], binary.BigEndian.Uint16(s[2:]))
		binary.LittleEndian.PutUint32(d[4:], binary.BigEndian.Uint32(s[4:]))
	}
	return out
}

// Execute loads prog (little-endian instruction bytes) with the
// conformance helpers and runs it over mem, as the suite's plugin protocol
// asks.
func Execute(prog, mem []byte, budget uint64) (uint64, error) {
	p, err := Load("plugin", prog, budget)
	if err != nil {
		return 0, err
	}
	if mem == nil {
		mem = []byte{}
	}
	return p.Run(mem)
}
