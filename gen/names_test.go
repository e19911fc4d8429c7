package gen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

func TestAssignNames(t *testing.T) {
	for _, tc := range []struct {
		cnames []string
		want   map[string]string
	}{
		{[]string{"__x", "x"}, map[string]string{"x": "X", "__x": "X__"}},
		{[]string{"_x", "__x", "x"}, map[string]string{"x": "X", "_x": "X_", "__x": "X__"}},
		{[]string{"foo_bar", "fooBar"}, map[string]string{"fooBar": "FooBar", "foo_bar": "FooBarProgram"}},
		{[]string{"__close"}, map[string]string{"__close": "Close__"}},
	} {
		n := names{"Close": true}
		got := n.assign(tc.cnames, "Program")
		for c, w := range tc.want {
			if got[c] != w {
				t.Errorf("%v: %s named %s, want %s", tc.cnames, c, got[c], w)
			}
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
	for _, want := range []string{"\tX NamesXProgram\n", "\tX__ NamesX__Program\n", "\tCount *bridge.Var[int32]\n", "\tCount__ *bridge.Var[int32]\n"} {
		if !strings.Contains(skel, want) {
			t.Errorf("skeleton lacks %q", want)
		}
	}
	if strings.Contains(skel, "ProgramProgram") {
		t.Error("skeleton has a ProgramProgram name")
	}
}
