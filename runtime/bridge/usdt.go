//go:build !windows

package bridge

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// USDT probes (SEC("usdt") programs written with libbpf's usdt.bpf.h), as
// libbpf attaches them: the binary's .note.stapsdt notes give each probe's
// address, semaphore and argument specification ("-4@%edi 8@-16(%rbp)
// 4@$5"); the arguments become a struct __bpf_usdt_spec in the object's
// __bpf_usdt_specs map, under an ID the uprobe carries as its BPF cookie,
// which bpf_usdt_arg reads the registers and memory by.

// usdtNote is one USDT probe site of a binary.
type usdtNote struct {
	provider, name, args string
	// loc and sema are the probe's and its semaphore's virtual addresses,
	// adjusted for prelinking by .stapsdt.base.
	loc, sema uint64
}

// usdtMaxArgs is BPF_USDT_MAX_ARG_CNT of usdt.bpf.h.
const usdtMaxArgs = 12

// usdtSpecSize is sizeof(struct __bpf_usdt_spec): 12 argument specs of 16
// bytes, the cookie, the argument count, padding.
const usdtSpecSize = 208

// usdtArg is struct __bpf_usdt_arg_spec.
type usdtArg struct {
	valOff   uint64
	argType  uint32 // BPF_USDT_ARG_CONST, _REG, _REG_DEREF
	regOff   int16
	signed   bool
	bitshift int8
}

const (
	usdtArgConst = iota
	usdtArgReg
	usdtArgRegDeref
)

// readUSDTNotes reads the USDT notes of the ELF file f.
func readUSDTNotes(f *elf.File) ([]usdtNote, error) {
	sec := f.Section(".note.stapsdt")
	if sec == nil {
		return nil, errors.New("no .note.stapsdt section: the binary has no USDT probes")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf(".note.stapsdt: %w", err)
	}
	var base uint64
	if b := f.Section(".stapsdt.base"); b != nil {
		base = b.Addr
	}
	addrSize := 8
	if f.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	addr := func(b []byte) uint64 {
		if addrSize == 4 {
			return uint64(f.ByteOrder.Uint32(b))
		}
		return f.ByteOrder.Uint64(b)
	}
	align := func(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
	var notes []usdtNote
	for len(data) >= 12 {
		namesz, descsz, typ := f.ByteOrder.Uint32(data), f.ByteOrder.Uint32(data[4:]), f.ByteOrder.Uint32(data[8:])
		data = data[12:]
		if align(namesz)+align(descsz) > uint64(len(data)) {
			return nil, errors.New(".note.stapsdt: truncated note")
		}
		name, desc := data[:namesz], data[align(namesz):align(namesz)+uint64(descsz)]
		data = data[align(namesz)+align(descsz):]
		if typ != 3 || string(bytes.TrimRight(name, "\x00")) != "stapsdt" || len(desc) < 3*addrSize {
			continue
		}
		n := usdtNote{loc: addr(desc), sema: addr(desc[2*addrSize:])}
		if noteBase := addr(desc[addrSize:]); base != 0 && noteBase != 0 {
			n.loc += base - noteBase
			if n.sema != 0 {
				n.sema += base - noteBase
			}
		}
		strs := strings.SplitN(string(desc[3*addrSize:]), "\x00", 4)
		if len(strs) < 3 {
			continue
		}
		n.provider, n.name, n.args = strs[0], strs[1], strs[2]
		notes = append(notes, n)
	}
	return notes, nil
}

// fileOffset is the offset in f of the virtual address addr, through the
// loadable segment that holds it (executable ones only when exec).
func fileOffset(f *elf.File, addr uint64, exec bool) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || exec && p.Flags&elf.PF_X == 0 {
			continue
		}
		if addr >= p.Vaddr && addr < p.Vaddr+p.Memsz {
			return addr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address %#x is in no loadable segment", addr)
}

// usdtSpec is the struct __bpf_usdt_spec of a probe's argument
// specification, for the registers of arch ("amd64", "arm64"), in the
// byte order order.
func usdtSpec(args, arch string, order binary.ByteOrder) ([]byte, error) {
	fields := strings.Fields(args)
	if len(fields) > usdtMaxArgs {
		return nil, fmt.Errorf("%d arguments, usdt.bpf.h reads at most %d", len(fields), usdtMaxArgs)
	}
	spec := make([]byte, usdtSpecSize)
	for i, f := range fields {
		a, err := parseUSDTArg(f, arch)
		if err != nil {
			return nil, fmt.Errorf("argument %d %q: %w", i+1, f, err)
		}
		b := spec[i*16:]
		order.PutUint64(b, a.valOff)
		order.PutUint32(b[8:], a.argType)
		order.PutUint16(b[12:], uint16(a.regOff))
		if a.signed {
			b[14] = 1
		}
		b[15] = byte(a.bitshift)
	}
	order.PutUint16(spec[200:], uint16(len(fields)))
	return spec, nil
}

// parseUSDTArg reads one argument of a note, SIZE@LOCATION with a negative
// SIZE for a signed value: on amd64 $CONST, %REG or OFF(%REG); on arm64
// CONST, REG, [REG] or [REG, OFF].
func parseUSDTArg(s, arch string) (usdtArg, error) {
	sizeText, loc, ok := strings.Cut(s, "@")
	if !ok {
		return usdtArg{}, errors.New("no @")
	}
	size, err := strconv.Atoi(sizeText)
	if err != nil {
		return usdtArg{}, fmt.Errorf("size: %w", err)
	}
	a := usdtArg{signed: size < 0}
	if size < 0 {
		size = -size
	}
	switch size {
	case 1, 2, 4, 8:
		a.bitshift = int8(64 - 8*size)
	default:
		return usdtArg{}, fmt.Errorf("size %d: want 1, 2, 4 or 8", size)
	}
	reg := func(name string) error {
		off, ok := usdtRegs[arch][name]
		if !ok {
			return fmt.Errorf("register %q of %s is not one usdt.bpf.h reads", name, arch)
		}
		a.regOff = off
		return nil
	}
	num := func(t string) (uint64, error) {
		n, err := strconv.ParseInt(t, 0, 64)
		if err != nil {
			// A symbol (g(%rip): a global's address) is not a number:
			// usdt.bpf.h, as libbpf, reads none.
			return 0, fmt.Errorf("%q is not a number: usdt.bpf.h reads constants, registers and registers plus a numeric offset, not a symbol's address (a global's argument as the compiler wrote it)", t)
		}
		return uint64(n), nil
	}
	switch arch {
	case "amd64":
		switch {
		case strings.HasPrefix(loc, "$"):
			a.argType = usdtArgConst
			a.valOff, err = num(loc[1:])
		case strings.HasPrefix(loc, "%"):
			a.argType = usdtArgReg
			err = reg(loc[1:])
		case strings.HasSuffix(loc, ")"):
			offText, r, ok := strings.Cut(strings.TrimSuffix(loc, ")"), "(%")
			if !ok || strings.Contains(r, ",") {
				return usdtArg{}, errors.New("want OFFSET(%REG)")
			}
			a.argType = usdtArgRegDeref
			if offText != "" {
				if a.valOff, err = num(offText); err != nil {
					return usdtArg{}, err
				}
			}
			err = reg(r)
		default:
			err = errors.New("want $CONST, %REG or OFFSET(%REG)")
		}
	case "arm64":
		switch {
		case strings.HasPrefix(loc, "["):
			inner := strings.TrimSuffix(strings.TrimPrefix(loc, "["), "]")
			r, offText, hasOff := strings.Cut(inner, ",")
			a.argType = usdtArgRegDeref
			if hasOff {
				if a.valOff, err = num(strings.TrimSpace(offText)); err != nil {
					return usdtArg{}, err
				}
			}
			err = reg(strings.TrimSpace(r))
		case loc != "" && (loc[0] == '-' || loc[0] >= '0' && loc[0] <= '9'):
			a.argType = usdtArgConst
			a.valOff, err = num(loc)
		default:
			a.argType = usdtArgReg
			err = reg(loc)
		}
	default:
		return usdtArg{}, fmt.Errorf("USDT arguments of %s are not read", arch)
	}
	return a, err
}

// usdtRegs are the offsets in the kernel's struct pt_regs of the
// registers USDT arguments name, by architecture.
var usdtRegs = map[string]map[string]int16{
	"amd64": amd64Regs(),
	"arm64": arm64Regs(),
}

// amd64Regs names every width of x86-64's registers.
func amd64Regs() map[string]int16 {
	m := map[string]int16{}
	// struct pt_regs: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di
	// orig_ax ip cs flags sp ss, 8 bytes each.
	legacy := map[string][]string{
		"bp": {"rbp", "ebp", "bp", "bpl"}, "bx": {"rbx", "ebx", "bx", "bl"},
		"ax": {"rax", "eax", "ax", "al"}, "cx": {"rcx", "ecx", "cx", "cl"},
		"dx": {"rdx", "edx", "dx", "dl"}, "si": {"rsi", "esi", "si", "sil"},
		"di": {"rdi", "edi", "di", "dil"}, "ip": {"rip", "eip", "ip"},
		"sp": {"rsp", "esp", "sp", "spl"},
	}
	for i, r := range []string{"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss"} {
		off := int16(8 * i)
		if names, ok := legacy[r]; ok {
			for _, n := range names {
				m[n] = off
			}
			continue
		}
		if strings.HasPrefix(r, "r") {
			for _, suffix := range []string{"", "d", "w", "b"} {
				m[r+suffix] = off
			}
		}
	}
	return m
}

// arm64Regs names x0-x30 (and w0-w30) and sp: struct user_pt_regs starts
// struct pt_regs with regs[31], sp, pc, pstate.
func arm64Regs() map[string]int16 {
	m := map[string]int16{"sp": 31 * 8}
	for i := range 31 {
		m["x"+strconv.Itoa(i)] = int16(8 * i)
		m["w"+strconv.Itoa(i)] = int16(8 * i)
	}
	return m
}
