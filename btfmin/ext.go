package btfmin

import (
	"encoding/binary"
	"fmt"
)

// cilium/ebpf parses .BTF.ext itself but keeps the fields of its
// CORERelocation unexported, and btfmin needs exactly those fields (kind,
// root type, access string). This file is the smallest reader of the
// core_relo subsection that gives them; func and line info are skipped.

// Kind is a CO-RE relocation kind as numbered in .BTF.ext (enum
// bpf_core_relo_kind in the kernel's UAPI).
type Kind uint32

// The 13 relocation kinds.
const (
	FieldByteOffset Kind = iota
	FieldByteSize
	FieldExists
	FieldSigned
	FieldLShiftU64
	FieldRShiftU64
	TypeIDLocal
	TypeIDTarget
	TypeExists
	TypeSize
	EnumvalExists
	EnumvalValue
	TypeMatches
	numKinds
)

var kindNames = [numKinds]string{
	"byte_off", "byte_sz", "field_exists", "signed", "lshift_u64", "rshift_u64",
	"local_type_id", "target_type_id", "type_exists", "type_size",
	"enumval_exists", "enumval_value", "type_matches",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint32(k))
}

// IsField reports whether k relocates a field access.
func (k Kind) IsField() bool { return k <= FieldRShiftU64 }

// IsEnum reports whether k relocates an enumerator.
func (k Kind) IsEnum() bool { return k == EnumvalExists || k == EnumvalValue }

// RawRelocation is one record of the core_relo subsection of .BTF.ext.
type RawRelocation struct {
	Section string // program section the instruction lives in
	InsnOff uint32 // byte offset of the instruction in Section
	TypeID  uint32 // root type, an ID in the object's .BTF
	Access  string // access string, e.g. "0:1:2"
	Kind    Kind
	Offset  int // of the record inside .BTF.ext, for error messages
}

// FormatError reports malformed BTF or .BTF.ext data at a byte offset of
// the named ELF section.
type FormatError struct {
	Section string
	Offset  int
	Msg     string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("section %s: offset %#x: %s", e.Section, e.Offset, e.Msg)
}

const btfMagic = 0xeb9f

// reader is a bounds-checked cursor over one section.
type reader struct {
	sec string
	b   []byte
	bo  binary.ByteOrder
}

func (r reader) errf(off int, format string, args ...any) error {
	return &FormatError{Section: r.sec, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (r reader) u32(off int) (uint32, error) {
	if off < 0 || off > len(r.b)-4 {
		return 0, r.errf(off, "u32 past end of section (%d bytes)", len(r.b))
	}
	return r.bo.Uint32(r.b[off:]), nil
}

// checkHeader checks the fixed part shared by .BTF and .BTF.ext headers:
// magic, version, flags and header length, 24 bytes in all.
func (r reader) checkHeader() error {
	if len(r.b) < 24 {
		return r.errf(0, "header truncated (%d bytes)", len(r.b))
	}
	if m := r.bo.Uint16(r.b); m != btfMagic {
		return r.errf(0, "bad magic %#x", m)
	}
	return nil
}

// stringTable returns the string section of raw .BTF data.
func stringTable(btf []byte, bo binary.ByteOrder) ([]byte, error) {
	r := reader{sec: ".BTF", b: btf, bo: bo}
	if err := r.checkHeader(); err != nil {
		return nil, err
	}
	hdrLen, _ := r.u32(4)
	strOff, _ := r.u32(16)
	strLen, _ := r.u32(20)
	start := uint64(hdrLen) + uint64(strOff)
	if start+uint64(strLen) > uint64(len(btf)) {
		return nil, r.errf(16, "string table [%d,+%d) outside section (%d bytes)", start, strLen, len(btf))
	}
	return btf[start : start+uint64(strLen)], nil
}

// cstring returns the NUL-terminated string at off in strs.
func cstring(strs []byte, off uint32) (string, bool) {
	if uint64(off) >= uint64(len(strs)) {
		return "", false
	}
	for i := int(off); i < len(strs); i++ {
		if strs[i] == 0 {
			return string(strs[off:i]), true
		}
	}
	return "", false
}

// ParseCORERelocations reads every CO-RE relocation record of a .BTF.ext
// section. strs is the string table of the object's .BTF. Unknown
// relocation kinds, truncated records and out-of-range string offsets are
// errors carrying the offset in .BTF.ext.
func ParseCORERelocations(ext, strs []byte, bo binary.ByteOrder) ([]RawRelocation, error) {
	r := reader{sec: ".BTF.ext", b: ext, bo: bo}
	if err := r.checkHeader(); err != nil {
		return nil, err
	}
	hdrLen, _ := r.u32(4)
	if hdrLen < 32 {
		// A header from before CO-RE existed: no relocations to read.
		return nil, nil
	}
	if uint64(hdrLen) > uint64(len(ext)) {
		return nil, r.errf(4, "header length %d past end of section (%d bytes)", hdrLen, len(ext))
	}
	coreOff, err := r.u32(24)
	if err != nil {
		return nil, err
	}
	coreLen, err := r.u32(28)
	if err != nil {
		return nil, err
	}
	start := uint64(hdrLen) + uint64(coreOff)
	end := start + uint64(coreLen)
	if end > uint64(len(ext)) {
		return nil, r.errf(24, "core_relo subsection [%d,%d) past end of section (%d bytes)", start, end, len(ext))
	}
	if coreLen == 0 {
		return nil, nil
	}
	off := int(start)
	recSize, err := r.u32(off)
	if err != nil {
		return nil, err
	}
	if recSize < 16 {
		return nil, r.errf(off, "core_relo record size %d, want at least 16", recSize)
	}
	off += 4
	var relos []RawRelocation
	for off < int(end) {
		if uint64(off)+8 > end {
			return nil, r.errf(off, "section header past end of core_relo subsection")
		}
		secOff, err := r.u32(off)
		if err != nil {
			return nil, err
		}
		num, err := r.u32(off + 4)
		if err != nil {
			return nil, err
		}
		sec, ok := cstring(strs, secOff)
		if !ok {
			return nil, r.errf(off, "section name offset %d outside string table", secOff)
		}
		off += 8
		if uint64(num)*uint64(recSize) > end-uint64(off) {
			return nil, r.errf(off-4, "%d records of %d bytes for %q past end of subsection", num, recSize, sec)
		}
		for i := uint32(0); i < num; i++ {
			insn, _ := r.u32(off)
			typ, _ := r.u32(off + 4)
			accOff, _ := r.u32(off + 8)
			kind, _ := r.u32(off + 12)
			if Kind(kind) >= numKinds {
				return nil, r.errf(off+12, "unknown CO-RE relocation kind %d in %q", kind, sec)
			}
			acc, ok := cstring(strs, accOff)
			if !ok {
				return nil, r.errf(off+8, "access string offset %d outside string table", accOff)
			}
			relos = append(relos, RawRelocation{Section: sec, InsnOff: insn, TypeID: typ, Access: acc, Kind: Kind(kind), Offset: off})
			off += int(recSize)
		}
	}
	return relos, nil
}
