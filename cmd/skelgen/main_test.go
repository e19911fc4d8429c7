package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestStderrEscaped runs skelgen on an input whose name holds a terminal
// escape sequence and bidi controls: the message names it escaped.
func TestStderrEscaped(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x\x1b[2J\u202e\xff.bpf.o")
	var stdout, stderr bytes.Buffer
	if code := run([]string{name}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit status %d, want 1; stderr:\n%s", code, stderr.String())
	}
	msg := stderr.String()
	if strings.ContainsAny(msg, "\x1b\u202e") || !strings.Contains(msg, `x\x1b[2J\u202e\xff.bpf.o`) {
		t.Errorf("stderr %q does not name the input escaped", msg)
	}
}

func TestTerminalWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n\tline\n", "plain\n\tline\n"},
		{"caf\u00e9 \u2192 ok", "caf\u00e9 \u2192 ok"},
		{"\x1b[31mred\r\x00", `\x1b[31mred\r\x00`},
		{"a\u202eb\u2066c\ufeffd", `a\u202eb\u2066c\ufeffd`},
		{"\xff\xfe", `\xff\xfe`},
	} {
		var b bytes.Buffer
		n, err := terminalWriter{&b}.Write([]byte(tc.in))
		if err != nil || n != len(tc.in) {
			t.Errorf("Write(%q) = %d, %v", tc.in, n, err)
		}
		if b.String() != tc.want {
			t.Errorf("Write(%q) wrote %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "skelgen v") || !strings.Contains(out, "github.com/skelgen/skelgen") {
		t.Errorf("skelgen version printed %q", out)
	}
}
