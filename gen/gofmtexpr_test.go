package gen

import (
	"go/format"
	"strings"
	"testing"
)

// gofmtExprCases are codes as jennifer renders them unformatted; known
// says gofmtExpr must write them (the rest it may leave to go/format).
var gofmtExprCases = []struct {
	src   string
	known bool
}{
	{"structs.HostLayout", true},
	{"* bridge.Map [MapsKey,MapsStats]", true},
	{"* ebpf.Map", true},
	{"bridge.NewMap [uint32,uint64]", true},
	{"bridge.NewUserProgram [struct{}]", true},
	{"func () (link.Link,error)", true},
	{"func (conn syscall.Conn) error", true},
	{"func (path string,symbol string,pid int) (link.Link,error)", true},
	{"func (a,b int) (n int,err error)", true},
	{"p . AttachTracepoint (\"syscalls\",\"sys_enter_getpid\")", true},
	{"p . AttachUprobe (path,symbol,false,pid)", true},
	{"[8] uint32", true},
	{"[] byte", true},
	{"[0x10] * [4] uint64", true},
	{"* f (x) . y [1]", true},
	{"func (func (int) error) func () []byte", true},
	{"x", true},
	// left to go/format
	{"func () (error)", false},
	{"func () (err error)", false},
	{"a + b", false},
	{"a * b", false},
	{"-1", false},
	{"0X1F", false},
	{"1_000", false},
	{"0xFF", false},
	{"08", false},
	{"0755", true},
	{"\"a\\tb\\x00\"", true},
	{"\"\\q\"", false},
	{"\"é\"", false},
	{"x . é", false},
	{"f (a) [0] . b", true},
	{"var", false},
	{"1.5", false},
	{"'a'", false},
	{"`raw`", false},
	{"f (a,b,)", false},
	{"f (a...)", false},
	{"struct {A int}", false},
	{"map [string] int", false},
	{"x /* c */", false},
	{"x // c", false},
	{"x . (T)", false},
	{"", false},
	{"f (", false},
	{"f ())", false},
	{"\"unterminated", false},
}

func TestGofmtExpr(t *testing.T) {
	// One formatter for all, twice: what it keeps from one code to the
	// next must not change the result.
	var shared exprFmt
	for range 2 {
		for _, c := range gofmtExprCases {
			got, ok := gofmtExpr(c.src)
			if ok != c.known {
				t.Errorf("gofmtExpr(%q): ok %v, want %v", c.src, ok, c.known)
			}
			if ok {
				checkGofmtExpr(t, c.src, got)
			}
			if again, againOK := shared.format(c.src); again != got || againOK != ok {
				t.Errorf("reused formatter: %q, %v; fresh: %q, %v", again, againOK, got, ok)
			}
		}
	}
}

// checkGofmtExpr requires out, gofmtExpr's text of src, to be go/format's
// text of src as an expression or, if src is no expression, as a type.
func checkGofmtExpr(t *testing.T, src, out string) {
	t.Helper()
	for _, decl := range []string{"var _ = ", "var _ "} {
		want, err := format.Source([]byte("package p\n\n" + decl + src + "\n"))
		if err != nil {
			continue
		}
		if got := "package p\n\n" + decl + out + "\n"; got != string(want) {
			t.Errorf("gofmtExpr(%q) = %q, go/format writes %q", src, out, strings.TrimPrefix(string(want), "package p\n\n"))
		}
		return
	}
	t.Errorf("gofmtExpr(%q) = %q, but go/format refuses it", src, out)
}

func FuzzGofmtExpr(f *testing.F) {
	for _, c := range gofmtExprCases {
		f.Add(c.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.ContainsAny(src, "\n\r") {
			// the trailer's codes are single lines
			return
		}
		if out, ok := gofmtExpr(src); ok {
			checkGofmtExpr(t, src, out)
		}
	})
}
