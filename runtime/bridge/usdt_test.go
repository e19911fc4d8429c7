//go:build !windows

package bridge

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestParseUSDTArg(t *testing.T) {
	for _, c := range []struct {
		arch, arg string
		want      usdtArg
		fail      bool
	}{
		{"amd64", "-4@%edi", usdtArg{argType: usdtArgReg, regOff: 112, signed: true, bitshift: 32}, false},
		{"amd64", "8@%r9", usdtArg{argType: usdtArgReg, regOff: 64, bitshift: 0}, false},
		{"amd64", "1@%r12b", usdtArg{argType: usdtArgReg, regOff: 24, bitshift: 56}, false},
		{"amd64", "-8@-16(%rbp)", usdtArg{valOff: ^uint64(15), argType: usdtArgRegDeref, regOff: 32, signed: true}, false},
		{"amd64", "4@(%rax)", usdtArg{argType: usdtArgRegDeref, regOff: 80, bitshift: 32}, false},
		{"amd64", "2@$0x10", usdtArg{valOff: 16, argType: usdtArgConst, bitshift: 48}, false},
		{"amd64", "4@%xmm0", usdtArg{}, true},
		{"amd64", "3@%rax", usdtArg{}, true},
		{"amd64", "8@8(%rax,%rbx,4)", usdtArg{}, true},
		{"amd64", "rax", usdtArg{}, true},
		{"arm64", "-4@x1", usdtArg{argType: usdtArgReg, regOff: 8, signed: true, bitshift: 32}, false},
		{"arm64", "8@[sp, 16]", usdtArg{valOff: 16, argType: usdtArgRegDeref, regOff: 248}, false},
		{"arm64", "4@[x2]", usdtArg{argType: usdtArgRegDeref, regOff: 16, bitshift: 32}, false},
		{"arm64", "-8@-5", usdtArg{valOff: ^uint64(4), argType: usdtArgConst, signed: true}, false},
		{"arm64", "8@v0", usdtArg{}, true},
		{"riscv64", "8@a0", usdtArg{}, true},
	} {
		got, err := parseUSDTArg(c.arg, c.arch)
		if c.fail {
			if err == nil {
				t.Errorf("%s %q: parsed as %+v, want an error", c.arch, c.arg, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %q: %+v, %v; want %+v", c.arch, c.arg, got, err, c.want)
		}
	}
}

func TestUSDTSpecLayout(t *testing.T) {
	spec, err := usdtSpec("-4@%edi 8@$3", "amd64", binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec) != usdtSpecSize {
		t.Fatalf("%d bytes", len(spec))
	}
	// struct __bpf_usdt_arg_spec: val_off, arg_type, reg_off, arg_signed,
	// arg_bitshift; arg_cnt at 200.
	want0 := []byte{0, 0, 0, 0, 0, 0, 0, 0, usdtArgReg, 0, 0, 0, 112, 0, 1, 32}
	want1 := []byte{3, 0, 0, 0, 0, 0, 0, 0, usdtArgConst, 0, 0, 0, 0, 0, 0, 0}
	if string(spec[:16]) != string(want0) || string(spec[16:32]) != string(want1) || binary.LittleEndian.Uint16(spec[200:]) != 2 {
		t.Errorf("spec % x", spec)
	}
	if _, err := usdtSpec("1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1", "amd64", binary.LittleEndian); err == nil {
		t.Error("13 arguments accepted")
	}
}

// TestUSDTArgSymbol: an argument at a global's address (g(%rip)) is
// refused saying why, not with strconv's message.
func TestUSDTArgSymbol(t *testing.T) {
	_, err := usdtSpec("-8@g(%rip) 4@$1", "amd64", binary.LittleEndian)
	if err == nil || !strings.Contains(err.Error(), `argument 1 "-8@g(%rip)": "g" is not a number`) || strings.Contains(err.Error(), "strconv") {
		t.Errorf("got %v, want argument 1 named, \"g\" not a number, no strconv", err)
	}
}
