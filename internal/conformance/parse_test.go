package conformance

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Case
	}{
		{"words", "# c\n-- asm\nmov %r0, 1\nexit\n-- raw\n0x00000001000000b7\n0x0000000000000095\n-- result\n0x1\n",
			Case{Name: "words", HasAsm: true, Asm: "mov %r0, 1\nexit", AsmLine: 3, HasRaw: true,
				Raw:       []byte{0xb7, 0, 0, 0, 1, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0},
				HasResult: true, Result: 1}},
		{"bytes", "-- raw\n07 00 01 00 01 00 00 00\n95 00 00 00 00 00 00 00\n-- error\n",
			Case{Name: "bytes", HasRaw: true, Raw: []byte{7, 0, 1, 0, 1, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0}, HasError: true}},
		{"mem", "-- asm\nexit\n-- mem\naa bb\n11\n-- result\n0xffffffffffffffff\n-- error\nDiv by zero",
			Case{Name: "mem", HasAsm: true, Asm: "exit", AsmLine: 2, Mem: []byte{0xaa, 0xbb, 0x11},
				HasResult: true, Result: ^uint64(0), HasError: true, Error: "Div by zero"}},
		{"unknown", "-- asm\nexit\n-- Unknown directive\n-- c\nint x;\n-- no register offset\ncall\n",
			Case{Name: "unknown", HasAsm: true, Asm: "exit", AsmLine: 2, Unknown: []string{"Unknown directive"}}},
		{"empty", "# only a comment\n", Case{Name: "empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.name+".data", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"stray\n-- asm\nexit\n", "x.data:1: text outside any section: \"stray\""},
		{"-- raw\n0x12zz\n", "x.data:2: section raw: bad word \"0x12zz\""},
		{"-- raw\n07 00 01\n", "x.data:2: section raw: 3 bytes is not a whole number of 8-byte slots"},
		{"-- raw\n07 0 01\n", "x.data:2: section raw: bad byte \"0\" (want two hex digits)"},
		{"-- mem\nzz\n", "x.data:2: section mem: bad byte \"zz\" (want two hex digits)"},
		{"-- result\n0x1\n0x2\n", "x.data:3: section result: want one value, have 2"},
		{"-- result\nabc\n", "section result: strconv.ParseUint"},
	}
	for _, tt := range tests {
		_, err := Parse("x.data", []byte(tt.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
			t.Errorf("Parse(%q) = %v, want a *ParseError containing %q", tt.in, err, tt.want)
		}
	}
}

// FuzzParse checks that no input panics and errors are *ParseError.
func FuzzParse(f *testing.F) {
	f.Add([]byte("-- asm\nexit\n-- raw\n0x95\n-- mem\n00 01\n-- result\n0x1\n"))
	f.Add([]byte("-- raw\n07 00 01 00 01 00 00 00\n-- error\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Parse("f.data", data); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
		}
	})
}
