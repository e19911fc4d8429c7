package gen

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestWriteFilesAsASet makes the second rename fail (its target is a
// non-empty directory) and checks that the first file keeps its old
// contents and that no directory or temporary file is left behind.
func TestWriteFilesAsASet(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.go")
	if err := os.WriteFile(first, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(dir, "b.go")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	newDir := filepath.Join(dir, "internal", "skelgenrt")
	err := WriteFiles([]File{
		{Path: first, Data: []byte("new")},
		{Path: filepath.Join(newDir, "c.go"), Data: []byte("c")},
		{Path: blocked, Data: []byte("b")},
	})
	if err == nil {
		t.Fatal("WriteFiles succeeded with a directory in the way")
	}
	if b, _ := os.ReadFile(first); string(b) != "old" {
		t.Errorf("a.go = %q after the failed write, want the old contents", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "internal")); !os.IsNotExist(err) {
		t.Errorf("the directory the failed write created is still there (%v)", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %q, want only a.go and b.go", names)
	}

	if err := os.RemoveAll(blocked); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles([]File{{Path: first, Data: []byte("new")}, {Path: blocked, Data: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(first); string(b) != "new" {
		t.Errorf("a.go = %q, want the new contents", b)
	}
}

// TestAOTOffStubsTranslation: generating with -aot=false where an
// earlier run wrote the translation replaces that file with a stub (go
// generate fails on a package file removed while it runs), which the
// next run keeps, and with -aot the translation comes back.
func TestAOTOffStubsTranslation(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/ubpf/ubpf_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "ubpf.bpf.o")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	aot := filepath.Join(dir, "ubpf_bpfel_aot.go")
	for _, on := range []bool{true, false, false, true} {
		files, err := Generate(context.Background(), Config{Input: in, Package: "ubpf", ImportRuntime: true, AOT: on})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(aot)
		if err != nil {
			t.Fatalf("-aot=%v: %v", on, err)
		}
		if stub := string(aotStub("ubpf")); (string(data) == stub) == on {
			t.Errorf("-aot=%v: the file is the stub: %v", on, !on)
		}
		if !on && !strings.Contains(string(data), "\npackage ubpf\n") {
			t.Errorf("-aot=false: the stub is not of package ubpf:\n%s", data)
		}
	}
	// A package whose translation was never written gets no stub.
	os.Remove(aot)
	files, err := Generate(context.Background(), Config{Input: in, Package: "ubpf", ImportRuntime: true, AOT: false})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == aot {
			t.Errorf("-aot=false with no translation file writes %s", f.Path)
		}
	}
}

// flagConfig is the Config of the generator's command line args.
func flagConfig(t *testing.T, args ...string) Config {
	t.Helper()
	fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
	f := NewFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.Config(fs.Args())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAOTAuto: -aot reads true, false and auto (the default), and auto
// translates the record hook and the program Go runs while the begin,
// interval, lost and end hooks are left to the interpreter.
func TestAOTAuto(t *testing.T) {
	dir := t.TempDir()
	writeModule(t, dir, map[string][]byte{"hooks.bpf.o": readSkeltestObject(t, "hooks")})
	in := filepath.Join(dir, "hooks.bpf.o")
	all := []string{"Begin", "Tick", "OnEvent", "OnLost", "End", "Outside"}
	for _, c := range []struct {
		args       []string
		translated []string
	}{
		{nil, []string{"OnEvent", "Outside"}},
		{[]string{"-aot=auto"}, []string{"OnEvent", "Outside"}},
		{[]string{"-aot"}, all},
		{[]string{"-aot=true"}, all},
		{[]string{"-aot=false"}, nil},
	} {
		files, err := Generate(context.Background(), flagConfig(t, append(c.args, "-runtime", "import", "-pkg", "hooks", in)...))
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var src string
		for _, f := range files {
			if strings.HasSuffix(f.Path, "_aot.go") {
				src = string(f.Data)
			}
		}
		for _, name := range all {
			want := slices.Contains(c.translated, name)
			if got := strings.Contains(src, "func hooks"+name+"Translation()"); got != want {
				t.Errorf("%v: program %s translated: %v, want %v", c.args, name, got, want)
			}
		}
	}
	fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	NewFlags(fs)
	if err := fs.Parse([]string{"-aot=sometimes", in}); err == nil || !strings.Contains(err.Error(), "want true, false or auto") {
		t.Errorf("-aot=sometimes: %v, want an error naming the values", err)
	}
}

// hostileModule is a scratch module holding the hostile test object with
// plain names, as pkg/hostile.bpf.o.
func hostileModule(t *testing.T) (mod, input string) {
	t.Helper()
	mod = t.TempDir()
	if err := os.MkdirAll(filepath.Join(mod, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	input = filepath.Join(mod, "pkg", "hostile.bpf.o")
	writeModule(t, mod, map[string][]byte{
		"go.mod":            []byte("module example.com/m\n\ngo 1.26\n\ntool github.com/skelgen/skelgen/cmd/skelgen\n"),
		"pkg/hostile.bpf.o": hostileObject(t, func(site string) string { return "plain_" + site }),
	})
	return mod, input
}

// TestStemIsAFileName requires that -stem names files in the output
// directory and nothing else.
func TestStemIsAFileName(t *testing.T) {
	mod, input := hostileModule(t)
	for _, stem := range []string{"../escape", "a/b", "..", ".hidden", "-x", "a b", "a\nb", "x.go"} {
		_, err := Generate(context.Background(), Config{Input: input, Stem: stem, Package: "p", ImportRuntime: true})
		if err == nil || !strings.Contains(err.Error(), "-stem") {
			t.Errorf("-stem %q: err = %v, want an error about -stem", stem, err)
		} else {
			checkMessage(t, "-stem", err.Error())
		}
	}
	for _, pkg := range []string{"main; func init() {}", "a\nb", "func"} {
		if _, err := Generate(context.Background(), Config{Input: input, Package: pkg, ImportRuntime: true}); err == nil {
			t.Errorf("package %q: generated, want an error", pkg)
		}
	}
	files, err := Generate(context.Background(), Config{Input: input, Stem: "my-probe_2", Package: "p", ImportRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Dir(f.Path) != filepath.Join(mod, "pkg") || !strings.HasPrefix(filepath.Base(f.Path), "my-probe_2_") {
			t.Errorf("-stem my-probe_2 writes %s", f.Path)
		}
	}
}

// TestNoWritesThroughSymlinks requires an error, and nothing written, when
// the runtime copy's directory or an output file is a symbolic link.
func TestNoWritesThroughSymlinks(t *testing.T) {
	mod, input := hostileModule(t)
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mod, "internal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(mod, "internal", "skelgenrt")); err != nil {
		t.Fatal(err)
	}
	_, err := Generate(context.Background(), Config{Input: input, Package: "p"})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("runtime copy through a symlinked directory: err = %v, want an error naming the link", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("%d entries written into the link's target", len(entries))
	}

	target := filepath.Join(elsewhere, "target.go")
	os.WriteFile(target, []byte("package target\n"), 0o644)
	link := filepath.Join(mod, "pkg", "hostile_bpfel.go")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), Config{Input: input, Package: "p", ImportRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("writing over a symlinked output: err = %v, want an error naming the link", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "package target\n" {
		t.Errorf("the link's target was changed to %d bytes", len(data))
	}
}

// TestOutputDirThroughSymlink gives -o a link inside the module to a
// directory outside it: the runtime copy belongs to the module the
// directory is in, as when -o names it directly, and a directory in no
// module is refused.
func TestOutputDirThroughSymlink(t *testing.T) {
	mod, input := hostileModule(t)
	other := t.TempDir()
	writeModule(t, other, map[string][]byte{"go.mod": []byte("module example.com/other\n\ngo 1.26\n")})
	if err := os.Mkdir(filepath.Join(other, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, target := range []string{outside, filepath.Join(other, "sub")} {
		link := filepath.Join(mod, "pkg", "out")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{target, link, filepath.Join(link, "new", "sub")} {
			files, err := Generate(context.Background(), Config{Input: input, Package: "p", OutputDir: dir})
			if target == outside {
				if _, _, merr := moduleOf(outside); merr == nil {
					continue // a go.mod above the temporary directory
				}
				if err == nil || !strings.Contains(err.Error(), "no go.mod above "+outside) {
					t.Errorf("-o %s: err = %v, want no go.mod above %s", dir, err, outside)
				}
				continue
			}
			if err != nil {
				t.Fatalf("-o %s: %v", dir, err)
			}
			for _, f := range files {
				if strings.Contains(f.Path, "skelgenrt") && !strings.HasPrefix(f.Path, filepath.Join(other, "internal", "skelgenrt")+string(filepath.Separator)) {
					t.Fatalf("-o %s: runtime copy written to %s, want it in %s", dir, f.Path, other)
				}
			}
		}
	}
}

// TestTempFilesCleanedUp puts in place what a generation killed midway
// leaves (temporary files next to its outputs and in the runtime copy)
// and requires that the next generation removes those older than a
// minute, and that skelgen check does not report them.
func TestTempFilesCleanedUp(t *testing.T) {
	mod, input := hostileModule(t)
	writeModule(t, mod, map[string][]byte{"pkg/gen.go": []byte("package p\n\n//go:generate go tool skelgen hostile.bpf.o\n")})
	files, err := Generate(context.Background(), Config{Input: input, Package: "p", AOT: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	var old, young []string
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		o := filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".tmp123")
		y := filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".tmp456.old")
		os.WriteFile(o, f.Data, 0o644)
		os.WriteFile(y, f.Data, 0o644)
		past := time.Now().Add(-2 * time.Minute)
		os.Chtimes(o, past, past)
		old, young = append(old, o), append(young, y)
	}
	if !isTempFile(old[0]) || !isTempFile(young[0]) || isTempFile(filepath.Join(mod, "pkg", ".x.tmp")) || isTempFile(filepath.Join(mod, "pkg", "x.go.tmp1")) {
		t.Fatal("isTempFile does not tell WriteFiles' temporary files")
	}
	var report strings.Builder
	res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Orphans) != 0 || len(res.Stale) != 0 {
		t.Errorf("check reports the temporary files:\n%s", report.String())
	}
	files, err = Generate(context.Background(), Config{Input: input, Package: "p", AOT: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	for _, o := range old {
		if _, err := os.Stat(o); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the next generation", o)
		}
	}
	for _, y := range young {
		if _, err := os.Stat(y); err != nil {
			t.Errorf("%s, younger than a minute, was removed: %v", y, err)
		}
	}
}
