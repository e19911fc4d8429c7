package gen

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestMakeBaseRelative: -makebase . (or any relative directory) is
// resolved against the current directory, as the source path is, and
// gives the depfile an absolute base would.
func TestMakeBaseRelative(t *testing.T) {
	testenv.Clang(t)
	root := testenv.ModuleRoot(t)
	depfileOf := func(base, input string) string {
		t.Helper()
		files, err := Generate(context.Background(), Config{
			Input:         input,
			Targets:       []Target{{Clang: "bpfel"}},
			CFlags:        []string{"-O2", "-mcpu=v3", "-I" + filepath.Join(root, "internal/skeltest/include")},
			MakeBase:      base,
			ImportRuntime: true,
		})
		if err != nil {
			t.Fatalf("-makebase %s: %v", base, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f.Path, ".go.d") {
				return string(f.Data)
			}
		}
		t.Fatalf("-makebase %s: no depfile", base)
		return ""
	}
	dir := filepath.Join(root, "internal/skeltest/uprobe")
	want := depfileOf(dir, filepath.Join(dir, "uprobe.bpf.c"))
	if !strings.HasPrefix(want, "uprobe_bpfel.go uprobe_bpfel.o: \\\n  ") {
		t.Errorf("depfile with an absolute base:\n%s", want)
	}
	t.Chdir(dir)
	if got := depfileOf(".", "uprobe.bpf.c"); got != want {
		t.Errorf("-makebase . gives\n%s\nwant\n%s", got, want)
	}
	t.Chdir(root)
	if got := depfileOf("internal/skeltest/uprobe", "internal/skeltest/uprobe/uprobe.bpf.c"); got != want {
		t.Errorf("-makebase internal/skeltest/uprobe gives\n%s\nwant\n%s", got, want)
	}
}
