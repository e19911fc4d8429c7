package gen

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// skeletonDirs are the packages holding skelgen go:generate lines and their
// committed outputs: the golden corpus of the skeleton generator.
var skeletonDirs = []string{
	"internal/skeltest/maps",
	"internal/skeltest/globals",
	"internal/skeltest/progs",
	"internal/skeltest/tracing",
	"internal/skeltest/uprobe",
	"internal/skeltest/ubpf",
	"internal/skeltest/corehdr",
	"internal/skeltest/sizing",
	"internal/skeltest/records",
	"examples/latency",
	"examples/execsnoop",
	"examples/opensnoop",
	"examples/stackcount",
	"examples/readsize",
	"examples/killsnoop",
}

// TestSkeletonsCurrent regenerates every committed skeleton in memory and
// compares it byte for byte with the committed files (the golden test):
// four of them spread over the list by default, all with SKELGEN_LONG=1
// (CI's skelgen check ./... compares every one as well). With clang the objects are recompiled and compared too; without it the
// committed objects are the input.
func TestSkeletonsCurrent(t *testing.T) {
	root := testenv.ModuleRoot(t)
	var out bytes.Buffer
	dirs := testenv.Sample(skeletonDirs, 4)
	patterns := make([]string, len(dirs))
	for i, d := range dirs {
		patterns[i] = "./" + d
	}
	res, err := Check(context.Background(), CheckOptions{Patterns: patterns, Dir: root, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generators != len(dirs) {
		t.Errorf("found %d skelgen go:generate lines, want %d", res.Generators, len(dirs))
	}
	if len(res.Stale) > 0 || len(res.Broken) > 0 {
		t.Errorf("committed skeletons differ from a fresh run (go generate ./... to accept):\n%s", out.String())
	}
}

// TestDeterministic generates each skeleton (three by default, all with
// SKELGEN_LONG=1) twice, compiling the C source each time when clang is
// present, and requires identical bytes.
func TestDeterministic(t *testing.T) {
	testenv.Clang(t)
	root := testenv.ModuleRoot(t)
	for _, dir := range testenv.Sample(skeletonDirs, 3) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			lines, err := generateLinesIn(files, nil)
			if err != nil || len(lines) == 0 {
				t.Fatalf("no skelgen go:generate line in %s: %v", dir, err)
			}
			cfg, err := lines[0].config()
			if err != nil {
				t.Fatal(err)
			}
			a, err := Generate(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Generate(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(a) != len(b) {
				t.Fatalf("%d files, then %d", len(a), len(b))
			}
			for i := range a {
				if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
					t.Errorf("%s differs between two runs", a[i].Path)
				}
			}
		})
	}
}

// TestSkeletonConcurrent generates the skeletons of the wide and large
// objects from several goroutines at once, as a program using this package
// may: every result must equal the one generated alone (run with -race,
// this also finds state shared between calls).
func TestSkeletonConcurrent(t *testing.T) {
	root := testenv.ModuleRoot(t)
	for _, name := range []string{"wide", "large"} {
		data, err := os.ReadFile(filepath.Join(root, "gen/testdata", name, name+"_bpfel.o"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := SkeletonConfig{Package: "p", Stem: name, ObjectFile: name + ".o", Target: Target{Clang: "bpfel"}}
		generate := func() ([]byte, error) {
			obj, err := ReadObject(name+".o", data)
			if err != nil {
				return nil, err
			}
			out, _, err := Skeleton(obj, cfg)
			return out, err
		}
		want, err := generate()
		if err != nil {
			t.Fatal(err)
		}
		const callers = 4
		got, errs := make([][]byte, callers), make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() { got[i], errs[i] = generate() })
		}
		wg.Wait()
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("%s, caller %d: %v", name, i, errs[i])
			}
			if !bytes.Equal(got[i], want) {
				t.Errorf("%s, caller %d: skeleton differs from the one generated alone:\n%s", name, i, firstDiff(want, got[i]))
			}
		}
	}
}

// TestGeneratedPackagesBuildStandalone copies each generated skeleton (Go
// files and objects, without tests or C sources) into a fresh module that
// requires skelgen through a replace directive, then builds and vets it.
// requiringSkelgen returns the go.mod of a scratch module named path that
// requires this module, from its directory, and this module's go.sum.
func requiringSkelgen(t *testing.T, path string) (goMod, goSum []byte) {
	t.Helper()
	root := testenv.ModuleRoot(t)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte("module " + path + "\n\ngo 1.26\n\nrequire github.com/skelgen/skelgen v0.0.0-00010101000000-000000000000\n\nreplace github.com/skelgen/skelgen => " + root + "\n"), sum
}

func TestGeneratedPackagesBuildStandalone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short mode: builds modules")
	}
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	goMod, sum := requiringSkelgen(t, "example.com/scratch")
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), goMod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range skeletonDirs {
		if strings.HasPrefix(dir, "examples/") {
			// The examples import this module's runtime copy
			// (internal/skelgenrt), which another module cannot;
			// the vendoring tests build such packages standalone.
			continue
		}
		name := filepath.Base(dir)
		dst := filepath.Join(mod, name)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		matches, _ := filepath.Glob(filepath.Join(root, dir, name+"_*"))
		if len(matches) == 0 {
			t.Fatalf("no generated files in %s", dir)
		}
		for _, m := range matches {
			if strings.HasSuffix(m, "_test.go") {
				continue
			}
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(m, ".go") {
				// The skeleton may live in package main (the example);
				// rename so that every copy is an importable library.
				data = bytes.Replace(data, []byte("\npackage main\n"), []byte("\npackage "+name+"\n"), 1)
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(m)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAOTFlag: -aot=false keeps the skeleton's API and runs user programs in
// the interpreter (no translation is generated).
func TestAOTFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/ubpf/ubpf_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := ReadObject("ubpf.o", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, aot := range []bool{true, false} {
		src, aotSrc, err := Skeleton(obj, SkeletonConfig{Package: "p", Stem: "ubpf", ObjectFile: "ubpf.o", Target: Target{Clang: "bpfel"}, AOT: aot})
		if err != nil {
			t.Fatal(err)
		}
		// The translation has a file of its own; the API file only binds it.
		hasTranslation := bytes.Contains(aotSrc, []byte("func ubpfReportTranslation() runtime.Translation"))
		if bytes.Contains(src, []byte("func ubpfReportTranslation()")) {
			t.Errorf("aot=%v: the translation is in the API file", aot)
		}
		interpreted := bytes.Contains(src, []byte(`bridge.NewUserProgram[UbpfReportCtx](o.set, "report", nil)`))
		if hasTranslation != aot || interpreted == aot {
			t.Errorf("aot=%v: translation generated %v, interpreter wired %v", aot, hasTranslation, interpreted)
		}
		if !bytes.Contains(src, []byte("Report *bridge.UserProgram[UbpfReportCtx]")) {
			t.Errorf("aot=%v: the Report field changed type", aot)
		}
	}
}

// TestMakeDepfile: -makebase writes a make rule naming the source and the
// headers it includes, relative to the base.
func TestMakeDepfile(t *testing.T) {
	testenv.Clang(t)
	root := testenv.ModuleRoot(t)
	dir := filepath.Join(root, "internal/skeltest/uprobe")
	files, err := Generate(context.Background(), Config{
		Input:         filepath.Join(dir, "uprobe.bpf.c"),
		Targets:       []Target{{Clang: "bpfel"}},
		CFlags:        []string{"-O2", "-mcpu=v3", "-I" + filepath.Join(root, "internal/skeltest/include")},
		MakeBase:      root,
		ImportRuntime: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var dep string
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".go.d") {
			dep = string(f.Data)
		}
	}
	for _, want := range []string{
		"internal/skeltest/uprobe/uprobe_bpfel.go internal/skeltest/uprobe/uprobe_bpfel.o:",
		"internal/skeltest/uprobe/uprobe.bpf.c",
		"internal/skeltest/include/common.h",
		"bpf/bpf_helpers.h",
	} {
		if !strings.Contains(dep, want) {
			t.Errorf("depfile lacks %q:\n%s", want, dep)
		}
	}
	if strings.Contains(dep, "skelgen-cc-") {
		t.Errorf("depfile names a temporary file:\n%s", dep)
	}
}

// TestBasicVarHandles: a variable of a basic type gets the runtime's own
// handle type (bridge.Uint32Var), not an instantiation of Var or VarSpec,
// whose methods the skeleton package would compile; other variables keep
// Var[T].
func TestBasicVarHandles(t *testing.T) {
	root := testenv.ModuleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "examples/killsnoop/killsnoop_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := ReadObject("killsnoop_bpfel.o", data)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := Skeleton(obj, SkeletonConfig{Package: "p", Stem: "killsnoop", ObjectFile: "killsnoop_bpfel.o", Target: Target{Clang: "bpfel"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"*bridge.Uint32Var ", "*bridge.Int32Var ", "*bridge.BoolVar ", "*bridge.Uint32VarSpec ", "*bridge.BoolVarSpec "} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the skeleton has no %s field", want)
		}
	}
	if bytes.Contains(src, []byte("bridge.Var[")) || bytes.Contains(src, []byte("bridge.VarSpec[")) {
		t.Error("the skeleton instantiates Var or VarSpec for a variable of a basic type")
	}
}
