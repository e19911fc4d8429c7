//go:build linux

package bridge

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGlobMatch: * and ? as libbpf's glob_match reads them.
func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		s, pattern string
		want       bool
	}{
		{"__x64_sys_getppid", "*sys_getppid", true},
		{"__x64_sys_getppid", "__x64_sys_getpp?d", true},
		{"__x64_sys_getppid", "*sys_getpid", false},
		{"a/b/pkg.f", "*/pkg.f", true},
		{"pkg.f", "*/pkg.f", false},
		{"abc", "a*c*", true},
		{"abc", "?", false},
		{"", "*", true},
		{"", "?", false},
	} {
		if got := globMatch(tc.s, tc.pattern); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.s, tc.pattern, got, tc.want)
		}
	}
}

// TestParseCPUList reads the kernel's CPU lists and refuses malformed ones.
func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0-2,5,7-8")
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 5, 7, 8}) {
		t.Errorf("parseCPUList: %v, %v", got, err)
	}
	for _, bad := range []string{"", "3-1", "a", "1-"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) accepted", bad)
		}
	}
}

// TestELFFunctions finds the C library's functions by pattern (go test's
// binaries have no symbol table), versioned dynamic symbols by name.
func TestELFFunctions(t *testing.T) {
	libs, _ := filepath.Glob("/lib/*/libc.so.6")
	if len(libs) == 0 {
		t.Skip("no /lib/*/libc.so.6")
	}
	got, err := elfFunctions(libs[0], "getpp?d")
	if err != nil || !slices.Equal(got, []string{"getppid"}) {
		t.Errorf("elfFunctions: %v, %v", got, err)
	}
	if _, err := elfFunctions(libs[0], "no_such_*"); err == nil {
		t.Error("a pattern matching nothing gave no error")
	}
}

// TestKernelFunctions resolves a pattern to the kernel's functions, not
// the padding symbols before them.
func TestKernelFunctions(t *testing.T) {
	if _, err := os.Stat("/proc/kallsyms"); err != nil {
		t.Skip("no /proc/kallsyms")
	}
	got, err := kernelFunctions("*sys_getppid")
	if err != nil {
		t.Skipf("reading the kernel's functions: %v", err)
	}
	if !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "sys_getppid") }) {
		t.Errorf("kernelFunctions(*sys_getppid) = %v", got)
	}
	for _, s := range got {
		if strings.HasPrefix(s, "__pfx_") {
			t.Errorf("kernelFunctions gave padding symbol %s", s)
		}
	}
	if got, err := kernelFunctions("plain_name"); err != nil || !slices.Equal(got, []string{"plain_name"}) {
		t.Errorf("a name without wildcards: %v, %v", got, err)
	}
}
