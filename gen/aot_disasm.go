package gen

import "fmt"

// disasm prints an instruction in the ubpf assembly dialect (the one
// package asm reads), for the comments of translated code. Jump and call
// targets are printed as absolute instruction indices.
func disasm(in *aotInsn) string {
	r := func(n uint8) string { return fmt.Sprintf("%%r%d", n) }
	mem := func(base uint8) string {
		switch {
		case in.off > 0:
			return fmt.Sprintf("[%s+%d]", r(base), in.off)
		case in.off < 0:
			return fmt.Sprintf("[%s%d]", r(base), in.off)
		}
		return fmt.Sprintf("[%s]", r(base))
	}
	src := func() string {
		if in.op&8 != 0 {
			return r(in.src)
		}
		return fmt.Sprint(in.imm)
	}
	sizes := map[uint8]string{0x00: "w", 0x08: "h", 0x10: "b", 0x18: "dw"}
	switch in.class() {
	case 4, 7:
		suffix := ""
		if in.class() == 4 {
			suffix = "32"
		}
		code := in.op & 0xf0
		switch code {
		case 0x80:
			return "neg" + suffix + " " + r(in.dst)
		case 0xd0:
			switch {
			case in.class() == 7:
				return fmt.Sprintf("bswap%d %s", in.imm, r(in.dst))
			case in.op&8 != 0:
				return fmt.Sprintf("be%d %s", in.imm, r(in.dst))
			}
			return fmt.Sprintf("le%d %s", in.imm, r(in.dst))
		}
		names := map[uint8]string{0x00: "add", 0x10: "sub", 0x20: "mul", 0x30: "div", 0x40: "or", 0x50: "and",
			0x60: "lsh", 0x70: "rsh", 0x90: "mod", 0xa0: "xor", 0xb0: "mov", 0xc0: "arsh"}
		name := names[code]
		switch {
		case (code == 0x30 || code == 0x90) && in.off == 1:
			name = "s" + name
		case code == 0xb0 && in.off != 0:
			name = fmt.Sprintf("movsx%d", in.off)
		}
		return fmt.Sprintf("%s%s %s, %s", name, suffix, r(in.dst), src())
	case 0:
		switch in.src {
		case 0:
			return fmt.Sprintf("lddw %s, %#x", r(in.dst), in.imm64)
		case 4:
			return fmt.Sprintf("lddw %s, function %d", r(in.dst), in.target)
		}
		return fmt.Sprintf("lddw %s, pseudo(%d) %d (%#x)", r(in.dst), in.src, in.imm, in.imm64)
	case 1:
		if in.op&0xe0 == 0x80 {
			return fmt.Sprintf("ldxs%s %s, %s", sizes[in.op&0x18], r(in.dst), mem(in.src))
		}
		return fmt.Sprintf("ldx%s %s, %s", sizes[in.op&0x18], r(in.dst), mem(in.src))
	case 2:
		return fmt.Sprintf("st%s %s, %d", sizes[in.op&0x18], mem(in.dst), in.imm)
	case 3:
		if in.op&0xe0 != 0xc0 {
			return fmt.Sprintf("stx%s %s, %s", sizes[in.op&0x18], mem(in.dst), r(in.src))
		}
		width := "64"
		if in.op&0x18 == 0 {
			width = "32"
		}
		ops := map[int32]string{0x00: "add", 0x40: "or", 0x50: "and", 0xa0: "xor", 0xe1: "xchg", 0xf1: "cmpxchg"}
		name, fetch := ops[in.imm&^1], ""
		if in.imm == 0xe1 || in.imm == 0xf1 {
			name = ops[in.imm]
		} else if in.imm&1 != 0 {
			fetch = "fetch "
		}
		return fmt.Sprintf("lock %s%s%s %s, %s", fetch, name, width, mem(in.dst), r(in.src))
	}
	switch {
	case in.op == 0x05 || in.op == 0x06:
		return fmt.Sprintf("ja %d", in.target)
	case in.op == 0x95:
		return "exit"
	case in.op == 0x85:
		switch in.src {
		case 1:
			return fmt.Sprintf("call local %d", in.target)
		case 2:
			return fmt.Sprintf("call runtime %d", in.imm)
		}
		return fmt.Sprintf("call %d", in.imm)
	case in.op == 0x8d:
		return "callx " + r(in.dst)
	}
	names := map[uint8]string{0x10: "jeq", 0x20: "jgt", 0x30: "jge", 0x40: "jset", 0x50: "jne", 0x60: "jsgt",
		0x70: "jsge", 0xa0: "jlt", 0xb0: "jle", 0xc0: "jslt", 0xd0: "jsle"}
	suffix := ""
	if in.class() == 6 {
		suffix = "32"
	}
	return fmt.Sprintf("%s%s %s, %s, %d", names[in.op&0xf0], suffix, r(in.dst), src(), in.target)
}
