package gen

import "testing"

func TestHasBuildIgnore(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"//go:build ignore\n#include <x.h>\n", true},
		{"// A comment first.\n\n//go:build ignore\n", true},
		{"//go:build linux\nint x;\n", false},
		{"//go:build !linux && !darwin && !windows && !freebsd\n", true},
		{"#include <x.h>\n//go:build ignore\n", false},
		{"int x;\n", false},
	}
	for _, tt := range tests {
		if got := hasBuildIgnore([]byte(tt.src)); got != tt.want {
			t.Errorf("hasBuildIgnore(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}
