package workloads

import (
	"encoding/binary"
)

// The byte-buffer workloads are written as clang writes a loop over a
// packet of a known minimum size: one comparison of data + size against
// data_end up front, then loops whose counters bound the offsets, each with
// one exit (the kernel's verifier needs the bound, and on 6.18 fails
// internally on loops with a second exit). Their body expects r1 = data and
// r2 = data_end; the user-space program (ubpf's convention: r1 = data,
// r2 = length) starts with userPrologue, the kernel's XDP program with
// kernelPrologue, which reads both from struct xdp_md. A buffer shorter
// than the size gives 0.
const (
	bufSize        = 2 << 10
	userPrologue   = "\tadd %r2, %r1\n"
	kernelPrologue = "\tldxw %r2, [%r1+4]\n\tldxw %r1, [%r1]\n"
	bufCheck       = "\tmov %r0, 0\n\tmov %r3, %r1\n\tadd %r3, 2048\n\tjgt %r3, %r2, out\n"
	// The classifier reads 1 KiB: over 2 KiB its many paths make the
	// 6.18 verifier fail internally (EFAULT) though it stays far from the
	// instruction limit.
	textSize  = 1 << 10
	textCheck = "\tmov %r0, 0\n\tmov %r3, %r1\n\tadd %r3, 1024\n\tjgt %r3, %r2, out\n"
)

// csumBufAsm sums 2 KiB as little-endian 64-bit words, 32 passes, and
// folds the sum to 32 bits.
const csumBufAsm = bufCheck + `
	mov %r6, 0
pass:
	mov %r3, %r1
	mov %r7, 0
word:
	ldxdw %r5, [%r3]
	add %r0, %r5
	add %r3, 8
	add %r7, 1
	jlt %r7, 256, word
	add %r6, 1
	jlt %r6, 32, pass
	mov %r4, %r0
	rsh %r4, 32
	add %r0, %r4
out:
	exit
`

func csumBufGo(b []byte) uint64 {
	if len(b) < bufSize {
		return 0
	}
	sum := uint64(0)
	for range 32 {
		for i := 0; i < bufSize; i += 8 {
			sum += binary.LittleEndian.Uint64(b[i:])
		}
	}
	return sum + sum>>32
}

// parseHdrAsm walks 2 KiB of 64-byte records, each an Ethernet header
// followed by an IPv4 header and ports, 16 passes; IPv4 records mix header
// length, protocol, addresses and ports (network byte order) into a hash,
// others only count.
const parseHdrAsm = bufCheck + `
	mov %r6, 0
pass:
	mov %r3, %r1
	mov %r7, 0
rec:
	ldxh %r5, [%r3+12]
	be16 %r5
	jne %r5, 0x0800, other
	ldxb %r5, [%r3+14]
	and %r5, 0xf
	lsh %r5, 2
	add %r0, %r5
	mul %r0, 31
	ldxb %r5, [%r3+23]
	xor %r0, %r5
	ldxw %r8, [%r3+26]
	be32 %r8
	ldxw %r9, [%r3+30]
	be32 %r9
	xor %r8, %r9
	add %r0, %r8
	ldxh %r5, [%r3+34]
	be16 %r5
	ldxh %r8, [%r3+36]
	be16 %r8
	lsh %r5, 16
	or %r5, %r8
	mul %r0, 31
	xor %r0, %r5
	ja adv
other:
	add %r0, 1
adv:
	add %r3, 64
	add %r7, 1
	jlt %r7, 32, rec
	add %r6, 1
	jlt %r6, 16, pass
out:
	exit
`

func parseHdrGo(b []byte) uint64 {
	if len(b) < bufSize {
		return 0
	}
	h := uint64(0)
	for range 16 {
		for i := 0; i < bufSize; i += 64 {
			r := b[i : i+64]
			if binary.BigEndian.Uint16(r[12:]) != 0x0800 {
				h++
				continue
			}
			h += uint64(r[14]&0xf) << 2
			h *= 31
			h ^= uint64(r[23])
			h += uint64(binary.BigEndian.Uint32(r[26:]) ^ binary.BigEndian.Uint32(r[30:]))
			h *= 31
			h ^= uint64(binary.BigEndian.Uint16(r[34:]))<<16 | uint64(binary.BigEndian.Uint16(r[36:]))
		}
	}
	return h
}

// classifyAsm classifies each byte of 1 KiB (control, space, punctuation,
// digit, upper, lower, other) with a chain of comparisons, as a tokenizer
// does, and adds a weight per class.
const classifyAsm = textCheck + `
	mov %r3, %r1
	mov %r7, 0
loop:
	ldxb %r5, [%r3]
	jlt %r5, 0x30, low
	jlt %r5, 0x3a, digit
	jlt %r5, 0x41, punct
	jlt %r5, 0x5b, upper
	jlt %r5, 0x61, punct
	jlt %r5, 0x7b, lower
	jlt %r5, 0x7f, punct
	add %r0, 0x55
	ja next
low:
	jeq %r5, 0x20, space
	jgt %r5, 0x20, punct
	add %r0, 1
	ja next
space:
	add %r0, 3
	ja next
punct:
	add %r0, 5
	ja next
digit:
	add %r0, 0x100
	ja next
upper:
	add %r0, 0x10000
	ja next
lower:
	add %r0, 0x1000000
next:
	add %r3, 1
	add %r7, 1
	jlt %r7, 1024, loop
out:
	exit
`

func classifyGo(b []byte) uint64 {
	if len(b) < textSize {
		return 0
	}
	n := uint64(0)
	for _, c := range b[:textSize] {
		switch {
		case c < 0x20:
			n += 1
		case c == 0x20:
			n += 3
		case c < 0x30:
			n += 5
		case c < 0x3a:
			n += 0x100
		case c < 0x41:
			n += 5
		case c < 0x5b:
			n += 0x10000
		case c < 0x61:
			n += 5
		case c < 0x7b:
			n += 0x1000000
		case c < 0x7f:
			n += 5
		default:
			n += 0x55
		}
	}
	return n
}

// lcg is a small deterministic generator for the buffers' contents.
type lcg uint64

func (l *lcg) next() uint32 {
	*l = *l*6364136223846793005 + 1442695040888963407
	return uint32(*l >> 33)
}

// packets returns n bytes of 64-byte records: three of four are IPv4 with
// varying header fields, the fourth IPv6 (skipped by the parser).
func packets(n int) []byte {
	b := make([]byte, n)
	g := lcg(1)
	for off := 0; off+64 <= n; off += 64 {
		r := b[off : off+64]
		for i := range r {
			r[i] = byte(g.next())
		}
		if off/64%4 == 3 {
			binary.BigEndian.PutUint16(r[12:], 0x86dd)
			continue
		}
		binary.BigEndian.PutUint16(r[12:], 0x0800)
		r[14] = 0x40 | byte(5+g.next()%3)
	}
	return b
}

// text returns n bytes that are mostly lower-case letters, with upper
// case, digits, spaces, punctuation, control and high bytes mixed in at
// random, so the classifier's branches are hard to predict.
func text(n int) []byte {
	b := make([]byte, n)
	g := lcg(7)
	for i := range b {
		switch x := g.next() % 100; {
		case x < 50:
			b[i] = 'a' + byte(g.next()%26)
		case x < 60:
			b[i] = 'A' + byte(g.next()%26)
		case x < 70:
			b[i] = '0' + byte(g.next()%10)
		case x < 80:
			b[i] = ' '
		case x < 90:
			b[i] = "!,.;:-()[]{}_/"[g.next()%14]
		case x < 95:
			b[i] = byte(g.next() % 0x20)
		default:
			b[i] = 0x80 | byte(g.next())
		}
	}
	return b
}

// bufferWorkloads are the byte-buffer workloads: each runs over a buffer
// (2 KiB, the classifier's 1 KiB), in user space as a program of ubpf's (data, len) convention and
// in the kernel as an XDP program over a packet of the same bytes.
func bufferWorkloads() []Workload {
	words := pattern(bufSize)
	pkts := packets(bufSize)
	txt := text(textSize)
	buf := func(name, body string, ctx []byte, fn func([]byte) uint64) Workload {
		return Workload{
			Name: name, Asm: userPrologue + body, KernelAsm: kernelPrologue + body, Buffer: true,
			Ctx: ctx, Want: fn(ctx), Go: func() uint64 { return fn(ctx) },
		}
	}
	return []Workload{
		buf("CsumBuf2K", csumBufAsm, words, csumBufGo),
		buf("ParseHdr2K", parseHdrAsm, pkts, parseHdrGo),
		buf("Classify1K", classifyAsm, txt, classifyGo),
	}
}
