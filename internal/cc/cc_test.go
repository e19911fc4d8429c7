package cc

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"-O2 -mcpu=v3", []string{"-O2", "-mcpu=v3"}, false},
		{`-I"a dir" -DX='1 2'  -g`, []string{"-Ia dir", "-DX=1 2", "-g"}, false},
		{`-I"open`, nil, true},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if (err != nil) != tt.bad || !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestFlagsAlias: -clang, btfmin's former name, sets the same compiler as -cc.
func TestFlagsAlias(t *testing.T) {
	for _, name := range []string{"-cc", "-clang"} {
		var f Flags
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f.Define(fs)
		if err := fs.Parse([]string{name, "my-clang"}); err != nil {
			t.Fatal(err)
		}
		if f.CC != "my-clang" || f.CFlags != DefaultCFlags {
			t.Errorf("%s: CC %q CFlags %q", name, f.CC, f.CFlags)
		}
	}
}

func TestIncludeArgs(t *testing.T) {
	dir := t.TempDir()
	args, err := IncludeArgs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) < 2 || args[0] != "-idirafter" {
		t.Fatalf("args %q", args)
	}
	if _, err := os.Stat(filepath.Join(args[1], "skelgen.h")); err != nil {
		t.Errorf("skelgen.h not written: %v", err)
	}
}
