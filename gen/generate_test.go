package gen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// TestWriteFilesKeepsUnchanged: WriteFiles leaves a file whose contents
// are on disk already (its modification time stays), writes the one that
// changed, and still refuses a symbolic link, whatever it points to.
func TestWriteFilesKeepsUnchanged(t *testing.T) {
	dir := t.TempDir()
	same, changed, link := filepath.Join(dir, "same.go"), filepath.Join(dir, "changed.go"), filepath.Join(dir, "link.go")
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, p := range []string{same, changed} {
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	files := []File{{Path: same, Data: []byte("package x\n")}, {Path: changed, Data: []byte("package y\n")}}
	if !Unchanged(files[0]) || Unchanged(files[1]) {
		t.Errorf("Unchanged: %v for the same bytes, %v for new ones", Unchanged(files[0]), Unchanged(files[1]))
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(f.Path); string(data) != string(f.Data) {
			t.Errorf("%s holds %q, want %q", f.Path, data, f.Data)
		}
		if kept := fi.ModTime().Equal(old); kept != (f.Path == same) {
			t.Errorf("%s: modification time kept: %v", filepath.Base(f.Path), kept)
		}
	}
	if err := os.Symlink(same, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles([]File{{Path: link, Data: []byte("package x\n")}}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("WriteFiles through a link to the same bytes: %v", err)
	}
}

// TestTargetsCompiledAtOnce: the targets compile at the same time, yet
// what they say comes out in the targets' order, as one compile after the
// other would give it: each target's warning, in order, and of two
// failing targets the first one's error.
func TestTargetsCompiledAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Clang(t)
	src := filepath.Join(t.TempDir(), "order.bpf.c")
	code := `#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#warning "little endian first"
#ifdef BROKEN
#error "little endian broke"
#endif
#else
#warning "big endian second"
#ifdef BROKEN
#error "big endian broke"
#endif
#endif
__attribute__((section("xdp"), used)) int prog(void *ctx) { return 2; }
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	cfg := Config{Input: src, Package: "order", ImportRuntime: true, CFlags: []string{"-O2"},
		Warn: func(msg string) { warnings = append(warnings, msg) }}
	if _, err := Generate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "little endian first") || !strings.Contains(warnings[1], "big endian second") {
		t.Errorf("warnings = %q, want bpfel's then bpfeb's", warnings)
	}
	warnings = nil
	cfg.CFlags = append(cfg.CFlags, "-DBROKEN")
	_, err := Generate(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "little endian broke") || strings.Contains(err.Error(), "big endian broke") {
		t.Errorf("error = %v, want bpfel's alone", err)
	}
}

// TestLargeTranslationSplit: a user program of more than 8000
// instructions in one function is translated as several Go functions,
// which the translation's doc says and, once for both targets, a warning.
func TestLargeTranslationSplit(t *testing.T) {
	t.Parallel()
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bpf.c")
	var code strings.Builder
	code.WriteString("typedef unsigned char __u8;\ntypedef unsigned long long __u64;\n")
	code.WriteString("__attribute__((section(\"ubpf/big\"), used)) __u64 big(__u8 *data, __u64 len)\n{\n\t__u64 h = len;\n")
	for k := range 1000 {
		fmt.Fprintf(&code, "\th = (h ^ data[%d]) * 0x100000001b3ULL; if (h & 1) h += %d; else h ^= h >> 7;\n", k%64, k)
	}
	code.WriteString("\treturn h;\n}\nchar LICENSE[] __attribute__((section(\"license\"), used)) = \"GPL\";\n")
	if err := os.WriteFile(src, []byte(code.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	cfg := Config{Input: src, Package: "big", ImportRuntime: true, AOT: true, CFlags: []string{"-O2"},
		Warn: func(msg string) { warnings = append(warnings, msg) }}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !regexp.MustCompile(`^big\.bpf\.c: program big: \d+ instructions, translated as \d+ Go functions`).MatchString(warnings[0]) {
		t.Errorf("warnings = %q, want one of the split translation", warnings)
	}
	translations := 0
	for _, f := range files {
		if strings.HasSuffix(f.Path, "_aot.go") {
			translations++
			if !regexp.MustCompile(`// Its \d+ instructions are translated as \d+ Go functions`).Match(f.Data) {
				t.Errorf("%s does not say how the program is split", f.Path)
			}
		}
	}
	if translations != 2 {
		t.Errorf("%d translations, want bpfel's and bpfeb's", translations)
	}
}
