package gen

import (
	"context"
	"encoding/binary"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/testenv"
)

// The naming rule of naming.go, on the names that used to swap: every
// name gets its documented Go name, no two names of a scope get the same,
// and adding a name renames no other (except one it collides with).
func TestAssignNames(t *testing.T) {
	for _, tc := range []struct {
		cnames []string
		want   []string
	}{
		{[]string{"_x", "x", "_"}, []string{"X_", "X", "Underscore_1"}},
		{[]string{"_x"}, []string{"X_"}},
		{[]string{"__x", "x"}, []string{"X__", "X"}},
		{[]string{"_x", "__x", "x"}, []string{"X_", "X__", "X"}},
		{[]string{"_x", "x", "_", "__x", "X", "x_", "x2"}, []string{"X_", "C_x", "Underscore_1", "X__", "C_X", "C_x_", "X2"}},
		{[]string{"x_2", "x2"}, []string{"C_x_2", "C_x2"}},
		{[]string{"foo_bar", "fooBar", "FOO"}, []string{"C_foo_bar", "C_fooBar", "Foo"}},
		{[]string{"__", "_", "___"}, []string{"Underscore_2", "Underscore_1", "Underscore_3"}},
		{[]string{"close", "__close"}, []string{"C_close", "Close__"}},
		{[]string{"dup", "dup"}, []string{"C_dup", "C_dup_2"}},
		{[]string{"C_x", "x", "X"}, []string{"CX", "C_x", "C_X"}},
	} {
		taken := map[string]bool{"Close": true}
		got := assignNames(tc.cnames, taken)
		seen := map[string]string{}
		for i, c := range tc.cnames {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %q named %s, want %s", tc.cnames, c, got[i], tc.want[i])
			}
			if prev, ok := seen[got[i]]; ok {
				t.Errorf("%q: %q and %q both named %s", tc.cnames, prev, c, got[i])
			}
			seen[got[i]] = c
			if !token.IsIdentifier(got[i]) || !token.IsExported(got[i]) {
				t.Errorf("%q: %q named %q, not an exported identifier", tc.cnames, c, got[i])
			}
			if !taken[got[i]] {
				t.Errorf("%q: %s not marked taken", tc.cnames, got[i])
			}
		}
	}
}

// Adding a name to a scope renames no name it does not collide with,
// whatever the order, and a Go name never moves to another C name.
func TestNamesStable(t *testing.T) {
	base := []string{"_x", "pid", "__pad", "comm", "fooBar", "_", "x2"}
	before := assignNameMap(base, map[string]bool{})
	for _, add := range []string{"x", "__x", "x_", "X", "foo_bar", "__", "bits0", "pid_", "_pid", "C_x"} {
		for _, at := range []int{0, len(base)} {
			cnames := append(append(append([]string(nil), base[:at]...), add), base[at:]...)
			after := assignNameMap(cnames, map[string]bool{})
			addPlain, _ := plainName(add)
			for _, c := range base {
				p, _ := plainName(c)
				collides := p != "" && p == addPlain
				if after[c] != before[c] && !collides {
					t.Errorf("adding %q renames %q from %s to %s", add, c, before[c], after[c])
				}
				for c2, n := range after {
					if n == before[c] && c2 != c {
						t.Errorf("adding %q: %s was %q's name, is now %q's", add, n, c, c2)
					}
				}
			}
		}
	}
}

// Member names follow the same rule in generated structs: the field or
// accessor of each member has the documented name, and names the
// generator adds (storage, setters, string methods) keep out of their way.
func TestMemberNames(t *testing.T) {
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	u64 := &btf.Int{Name: "unsigned long long", Size: 8}
	ch := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	st := &btf.Struct{Name: "names", Size: 40, Members: []btf.Member{
		{Name: "_x", Type: u32, Offset: 0},
		{Name: "x", Type: u32, Offset: 32},
		{Name: "_", Type: u32, Offset: 64},
		{Name: "__x", Type: u32, Offset: 96},
		{Name: "bits0", Type: u32, Offset: 128},
		{Name: "set_flag", Type: u32, Offset: 160},
		{Name: "flag", Type: u32, Offset: 192, BitfieldSize: 3},
		{Name: "comm", Type: &btf.Array{Type: ch, Nelems: 4, Index: u32}, Offset: 224},
		{Name: "comm_string", Type: u64, Offset: 256},
	}}
	g := NewTypeGen(binary.LittleEndian)
	if _, err := g.GoType(st); err != nil {
		t.Fatal(err)
	}
	decls, err := g.Decls()
	if err != nil {
		t.Fatal(err)
	}
	f := jen.NewFile("p")
	f.Add(decls...)
	src := f.GoString()
	flat := regexp.MustCompile(`[ \t]+`).ReplaceAllString(src, " ")
	for _, want := range []string{
		"X_ uint32 // member _x",
		"X uint32\n",
		"Underscore_1 uint32 // member _",
		"X__ uint32 // member __x",
		"Bits0 uint32\n",
		"SetFlag uint32\n",
		"Bits0_2 [1]byte",
		"func (s *Names) Flag() uint32",
		"func (s *Names) SetFlag_2(v uint32)",
		"CommString uint64\n",
		"func (s *Names) CommString_2() string",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
}

// Programs x and __x get readable fields and types, not XProgramProgram;
// variables count and __count are Count and Count__.
func TestCollidingProgramNames(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "names.bpf.c")
	code := `
__attribute__((section("xdp"), used)) int x(void *ctx) { return 2; }
__attribute__((section("xdp"), used)) int __x(void *ctx) { return 2; }
__attribute__((section("ubpf/a"), used)) int ux(void *ctx) { return 2; }
__attribute__((section("ubpf/b"), used)) int __ux(void *ctx) { return 2; }
int count, __count;
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), Config{Input: src, Package: "names", ImportRuntime: true, AOT: true, Targets: []Target{{Clang: "bpfel"}}})
	if err != nil {
		t.Fatal(err)
	}
	var skel, translated string
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, "_aot.go"):
			translated = string(f.Data)
		case strings.HasSuffix(f.Path, ".go"):
			skel = string(f.Data)
		}
	}
	// ux and __ux: their translations' functions are named after their
	// fields, so they differ.
	for _, want := range []string{"func namesUxTranslation()", "func namesUx__Translation()"} {
		if !strings.Contains(translated, want) {
			t.Errorf("translation lacks %q", want)
		}
	}
	for _, want := range []string{"\tX *bridge.XDP `skelgen:\"x\"`\n", "\tX__ *bridge.XDP `skelgen:\"__x\"`\n", "\tCount *bridge.Int32Var `skelgen:\"count\"`\n", "\tCount__ *bridge.Int32Var `skelgen:\"__count\"`\n"} {
		if !strings.Contains(skel, want) {
			t.Errorf("skeleton lacks %q", want)
		}
	}
	if strings.Contains(skel, "ProgramProgram") {
		t.Error("skeleton has a ProgramProgram name")
	}
}
