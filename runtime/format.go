package runtime

import (
	"errors"
	"fmt"
	"strconv"
)

// Format appends to out the text of the bpf_trace_printk-style format f
// with args, as trace_printk and snprintf do. Built-in functions outside
// this package (printf for user programs) share the conversion rules this
// way. A format the kernel refuses is an error wrapping ErrFormat.
func (m *Machine) Format(out, f []byte, args []uint64) ([]byte, error) {
	return m.format(out, f, args)
}

// ErrFormat reports a format that the kernel's bpf_bprintf_prepare
// refuses (for bpf_snprintf, its verifier refuses the program).
var ErrFormat = errors.New("format refused")

// CheckFormat reports whether the kernel accepts f (up to its NUL, if any)
// as the format of nargs arguments.
func CheckFormat(f []byte, nargs int) error {
	_, err := (*Machine)(nil).format(nil, f, make([]uint64, nargs))
	return err
}

// maxFormatArgs is the most arguments bpf_snprintf takes
// (MAX_BPRINTF_VARARGS).
const maxFormatArgs = 12

// maxWidth bounds a conversion's field width, as the kernel's does
// (FIELD_WIDTH_MAX); a wider one is refused.
const maxWidth = 1<<23 - 1

// format appends f with args substituted as the kernel's bpf_snprintf
// does: bpf_bprintf_prepare's checks, then bstr_printf's conversions.
// Every ASCII byte of f must be printable or white space (bytes past ASCII,
// UTF-8 text, are accepted as Linux 6.18 accepts them). A conversion is
// %%, or % with any of the flags "0+- ", an optional width and:
//   - d i u x X, after l or ll for all 8 bytes of the argument (else its
//     low 4);
//   - c, the argument's low byte;
//   - s, a string the argument points at, then not a letter or digit; a
//     string the run cannot read prints as "";
//   - p, the argument in hex: %p and %pK as the kernel prints them with
//     no_hash_pointers (it hashes them), %px 16 digits, %ps %pS and %pB
//     as "0x" and the digits (no kernel symbol is in reach); %pks and %pus
//     as %s; %pI4 %pi4 %pI6 %pi6 the IPv4 or IPv6 address the argument
//     points at (zeros when unreadable). %pks %pus %pB and the addresses
//     ignore the width (bpf_bprintf_prepare formats them before
//     bstr_printf sees it), and letters and digits right after a %p
//     conversion are dropped, as bstr_printf drops them.
//
// There is no precision, and conversions beyond the arguments are
// refused. With m nil, the format is only checked (strings print empty).
func (m *Machine) format(out, f []byte, args []uint64) ([]byte, error) {
	next := 0
	for i := 0; i < len(f); i++ {
		if c := f[i]; c < ' ' && !isSpace(c) || c == 0x7f {
			return out, fmt.Errorf("%w: byte %#02x at %d is a control character", ErrFormat, c, i)
		}
		if f[i] != '%' {
			out = append(out, f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			out = append(out, '%')
			i++
			continue
		}
		if next >= len(args) {
			return out, fmt.Errorf("%w: conversion at %d has no argument (%d given)", ErrFormat, i, len(args))
		}
		at := i
		i++
		var zero, plus, left, space bool
	flags:
		for ; i < len(f); i++ {
			switch f[i] {
			case '0':
				zero = true
			case '+':
				plus = true
			case '-':
				left = true
			case ' ':
				space = true
			default:
				break flags
			}
		}
		width := 0
		for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
			if width = width*10 + int(f[i]-'0'); width > maxWidth {
				return out, fmt.Errorf("%w: conversion at %d: width over %d", ErrFormat, at, maxWidth)
			}
		}
		c := byteAt(f, i)
		a := args[next]
		next++
		start := len(out)
		zero = zero && !left
		text := true // padded with spaces, a string's way
		switch c {
		case 'p':
			var err error
			if out, i, err = m.formatPointer(out, f, i, a, &width, &zero); err != nil {
				return out, fmt.Errorf("%w: conversion at %d: %v", ErrFormat, at, err)
			}
			text = false
		case 's':
			if !endsWord(f, i+1) {
				return out, fmt.Errorf("%w: %%s at %d is followed by a letter or digit", ErrFormat, at)
			}
			out = m.appendString(out, a)
		case 'c':
			out = append(out, byte(a))
		default:
			long := 0
			for long < 2 && byteAt(f, i) == 'l' {
				long++
				i++
			}
			if long == 0 {
				a = uint64(uint32(a))
			}
			switch byteAt(f, i) {
			case 'd', 'i':
				v := int64(a)
				if long == 0 {
					v = int64(int32(a))
				}
				if v >= 0 && plus {
					out = append(out, '+')
				} else if v >= 0 && space {
					out = append(out, ' ')
				}
				out = strconv.AppendInt(out, v, 10)
			case 'u':
				out = strconv.AppendUint(out, a, 10)
			case 'x':
				out = strconv.AppendUint(out, a, 16)
			case 'X':
				out = appendUpperHex(out, a)
			default:
				return out, fmt.Errorf("%w: unsupported conversion at %d", ErrFormat, at)
			}
			text = false
		}
		if m != nil {
			if err := m.ChargeText(width); err != nil {
				return out, err
			}
			out = pad(out, start, width, left, zero && !text)
		}
	}
	return out, nil
}

// formatPointer appends the %p conversion at f[i] ('p') of a, given
// width, and returns the index of its last byte; it clears zero for the
// kinds that print text, and width for those the kernel prints without
// padding.
func (m *Machine) formatPointer(out, f []byte, i int, a uint64, width *int, zero *bool) ([]byte, int, error) {
	k := byteAt(f, i+1)
	switch {
	case k == 0 || isSpace(k) || isPunct(k):
		// %p, printed as the kernel prints NULL and error pointers.
		return appendPointer(out, a, *width), i, nil
	case (k == 'k' || k == 'u') && byteAt(f, i+2) == 's':
		if !endsWord(f, i+3) {
			return out, i, errors.New("%pks or %pus is followed by a letter or digit")
		}
		*width = 0
		return m.appendString(out, a), i + 2, nil
	case k == 'K' || k == 'x':
		out = appendPointer(out, a, *width)
	case k == 's' || k == 'S' || k == 'B':
		out = strconv.AppendUint(append(out, "0x"...), a, 16)
		*zero = false
		if k == 'B' {
			*width = 0
		}
	case (k == 'i' || k == 'I') && (byteAt(f, i+2) == '4' || byteAt(f, i+2) == '6'):
		out = m.appendIP(out, a, k, f[i+2])
		*width = 0
		i++
	default:
		return out, i, errors.New("unsupported %p kind")
	}
	i++
	// bstr_printf skips the letters and digits after the kind.
	for i+1 < len(f) && isAlnum(f[i+1]) {
		i++
	}
	return out, i, nil
}

// appendPointer appends a in hex as the kernel's pointer_string does:
// zero-padded to 16 digits when no width is given.
func appendPointer(out []byte, a uint64, width int) []byte {
	start := len(out)
	out = strconv.AppendUint(out, a, 16)
	if width == 0 {
		out = pad(out, start, 16, false, true)
	}
	return out
}

// appendString appends the NUL-terminated string at a, or nothing when the
// run cannot read one there (the kernel prints an empty string then).
func (m *Machine) appendString(out []byte, a uint64) []byte {
	if m == nil {
		return out
	}
	s, err := m.CBytes(a, 1<<16)
	if err != nil {
		return out
	}
	return append(out, s...)
}

// appendIP appends the IPv4 (v '4') or IPv6 address at a as %pI (kind
// 'I') or %pi prints it; an address the run cannot read is zeros.
func (m *Machine) appendIP(out []byte, a uint64, kind, v byte) []byte {
	var ip [16]byte
	n := 4
	if v == '6' {
		n = 16
	}
	if m != nil {
		if b, err := m.Bytes(a, uint64(n)); err == nil {
			copy(ip[:], b)
		}
	}
	if n == 4 {
		for j, b := range ip[:4] {
			if j > 0 {
				out = append(out, '.')
			}
			if kind == 'i' {
				out = append(out, '0'+b/100, '0'+b/10%10, '0'+b%10)
			} else {
				out = strconv.AppendUint(out, uint64(b), 10)
			}
		}
		return out
	}
	const digits = "0123456789abcdef"
	for j, b := range ip {
		if j > 0 && j%2 == 0 && kind == 'I' {
			out = append(out, ':')
		}
		out = append(out, digits[b>>4], digits[b&15])
	}
	return out
}

func appendUpperHex(out []byte, a uint64) []byte {
	n := len(out)
	out = strconv.AppendUint(out, a, 16)
	for j := n; j < len(out); j++ {
		if c := out[j]; c >= 'a' {
			out[j] = c - 'a' + 'A'
		}
	}
	return out
}

func byteAt(f []byte, i int) byte {
	if i < len(f) {
		return f[i]
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isAlnum(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' }

func isPunct(c byte) bool { return c > ' ' && c <= '~' && !isAlnum(c) }

// endsWord reports whether f[i] ends a %s: the end, white space or
// punctuation.
func endsWord(f []byte, i int) bool {
	c := byteAt(f, i)
	return c == 0 || isSpace(c) || isPunct(c)
}

// pad widens out[start:] to width: spaces after it when left-aligned,
// zeros after any sign when zero-padded, spaces before it otherwise.
func pad(out []byte, start, width int, left, zero bool) []byte {
	n := width - (len(out) - start)
	if n <= 0 {
		return out
	}
	fill := byte(' ')
	if zero {
		fill = '0'
	}
	out = append(out, make([]byte, n)...)
	if left {
		fillBytes(out[len(out)-n:], ' ')
		return out
	}
	at := start
	if zero && (out[at] == '-' || out[at] == '+' || out[at] == ' ') {
		at++
	}
	copy(out[at+n:], out[at:len(out)-n])
	fillBytes(out[at:at+n], fill)
	return out
}

// fillBytes sets every byte of b to c, in copies that double in length.
func fillBytes(b []byte, c byte) {
	if len(b) == 0 {
		return
	}
	b[0] = c
	for k := 1; k < len(b); k *= 2 {
		copy(b[k:], b[:k])
	}
}

// BytesPerUnit is the bytes of work one unit of Charge pays for: helpers
// and built-ins charge one unit per BytesPerUnit bytes they copy, compare,
// hash, clear, allocate or format (rounded down, so small keys and values
// cost nothing beyond the call) and one per map entry they step over.
// Eight bytes take about as long as an interpreted instruction or less
// when copied, compared or cleared, and a few instructions' time when
// hashed or newly allocated (BenchmarkHelperWork measures ns per unit).
const BytesPerUnit = 8

// ChargeBytes charges the work of n bytes (see BytesPerUnit and Charge).
func (m *Machine) ChargeBytes(n int) error { return m.Charge(int64(n) / BytesPerUnit) }

// ChargeText charges the work of reading or writing n bytes of text: as
// ChargeBytes, for the runtime's helpers and the built-ins of other
// packages alike.
func (m *Machine) ChargeText(n int) error { return m.ChargeBytes(n) }
