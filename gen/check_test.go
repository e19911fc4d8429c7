package gen

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestCheckReportsInLineOrder: Check runs the lines' generates at once
// but reports as one after the other would: stale files in the lines'
// order, and on a line it cannot run, what the lines before it found,
// then its error, naming it. (The module does not build: only what the
// generates make is looked at.)
func TestCheckReportsInLineOrder(t *testing.T) {
	t.Parallel()
	mod, input := hostileModule(t)
	obj, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for i := range 4 {
		files[fmt.Sprintf("p%d/gen.go", i)] = []byte(fmt.Sprintf("package p%d\n\n//go:generate go tool skelgen hostile.bpf.o\n", i))
		files[fmt.Sprintf("p%d/hostile.bpf.o", i)] = obj
		if err := os.MkdirAll(filepath.Join(mod, fmt.Sprintf("p%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeModule(t, mod, files)
	check := func() (string, *CheckResult, error) {
		t.Helper()
		var report strings.Builder
		res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
		return report.String(), res, err
	}
	for i := range 4 {
		files, err := Generate(context.Background(), Config{Input: filepath.Join(mod, fmt.Sprintf("p%d", i), "hostile.bpf.o"), Package: fmt.Sprintf("p%d", i), AOT: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
	}
	if report, res, err := check(); err != nil || len(res.Stale) != 0 {
		t.Fatalf("check of fresh files: %v\n%s", err, report)
	}
	for _, p := range []string{"p0", "p2", "p3"} {
		skel := filepath.Join(mod, p, "hostile_bpfel.go")
		data, err := os.ReadFile(skel)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(skel, append(data, "// hand edit\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report, res, err := check()
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, f := range res.Stale {
		stale = append(stale, filepath.Base(filepath.Dir(f)))
	}
	if strings.Join(stale, " ") != "p0 p2 p3" {
		t.Errorf("stale packages %v, want p0 p2 p3 in that order:\n%s", stale, report)
	}
	at := func(s string) int { return strings.Index(report, s) }
	if !(at("p0/hostile_bpfel.go: stale") >= 0 && at("p0/hostile_bpfel.go: stale") < at("p2/hostile_bpfel.go: stale") && at("p2/hostile_bpfel.go: stale") < at("p3/hostile_bpfel.go: stale")) {
		t.Errorf("report not in the lines' order:\n%s", report)
	}

	// p1's line now has a flag skelgen does not know.
	bad := filepath.Join(mod, "p1", "gen.go")
	if err := os.WriteFile(bad, []byte("package p1\n\n//go:generate go tool skelgen -nope hostile.bpf.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	report, _, err = check()
	if err == nil || !strings.Contains(err.Error(), bad+":3") {
		t.Errorf("a line with an unknown flag: err = %v, want one naming %s:3", err, bad)
	}
	if !strings.Contains(report, "p0/hostile_bpfel.go: stale") || strings.Contains(report, "p2/") {
		t.Errorf("report before the bad line, want p0's alone:\n%s", report)
	}
}

// skelgenModule returns a scratch module (hostileModule's) holding a
// package per entry of pkgs, each with its object, its Go files (name →
// contents) and the files a generate of the object makes, and the check
// of ./... in it.
func skelgenModule(t *testing.T, goMod string, pkgs map[string]map[string]string) (string, *CheckResult, error) {
	t.Helper()
	mod, input := hostileModule(t)
	obj, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	if goMod != "" {
		writeModule(t, mod, map[string][]byte{"go.mod": []byte(goMod)})
	}
	for p, files := range pkgs {
		if err := os.MkdirAll(filepath.Join(mod, p), 0o755); err != nil {
			t.Fatal(err)
		}
		all := map[string][]byte{p + "/hostile.bpf.o": obj}
		for name, text := range files {
			all[p+"/"+name] = []byte(text)
		}
		writeModule(t, mod, all)
		gen, err := Generate(context.Background(), Config{Input: filepath.Join(mod, p, "hostile.bpf.o"), Package: p, AOT: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(gen); err != nil {
			t.Fatal(err)
		}
	}
	var report strings.Builder
	res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
	return report.String(), res, err
}

// TestCheckReadsLinesAsGoGenerate: check finds every skelgen line go
// generate runs: after a tab or several spaces, in test files, through a
// -command shorthand, and a binary named skelgen run by its path, of which
// the report says that go generate runs it, not check's skelgen.
func TestCheckReadsLinesAsGoGenerate(t *testing.T) {
	gobin := filepath.Join(t.TempDir(), "bin")
	t.Setenv("GOBIN", gobin)
	report, res, err := skelgenModule(t, "", map[string]map[string]string{
		"ptab":     {"gen.go": "package ptab\n\n//go:generate\tgo tool skelgen hostile.bpf.o\n"},
		"pspaces":  {"gen.go": "package pspaces\n\n//go:generate   go tool  skelgen hostile.bpf.o\n"},
		"ptest":    {"p.go": "package ptest\n", "gen_test.go": "package ptest\n\n//go:generate go tool skelgen hostile.bpf.o\n"},
		"pcommand": {"gen.go": "package pcommand\n\n//go:generate -command sk go tool skelgen\n//go:generate sk hostile.bpf.o\n"},
		"pbin":     {"gen.go": "package pbin\n\n//go:generate ./bin/skelgen hostile.bpf.o\n"},
		"pgobin":   {"gen.go": "package pgobin\n\n//go:generate $GOBIN/skelgen hostile.bpf.o\n"},
	})
	// The module does not build: only what the generates make is looked at.
	if err != nil || len(res.Stale)+len(res.Orphans) != 0 || res.Generators != 6 {
		t.Fatalf("check: %v, want 6 lines and nothing stale or orphaned:\n%s", err, report)
	}
	for _, want := range []string{"pbin/gen.go:3: go generate runs ./bin/skelgen", "pgobin/gen.go:3: go generate runs " + filepath.Join(gobin, "skelgen")} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestCheckRefusesLookalikes: a line that runs a program named like
// skelgen that is not skelgen fails check, saying why, even when the files
// are what check's skelgen makes.
func TestCheckRefusesLookalikes(t *testing.T) {
	const module = "module example.com/m\n\ngo 1.26\n"
	for _, tc := range []struct {
		name, goMod, gen, want string
	}{
		{"local", "", "//go:generate go run ./evil/cmd/skelgen hostile.bpf.o\n", "go run ./evil/cmd/skelgen runs the package in "},
		{"fork", "", "//go:generate go run example.com/fork/cmd/skelgen@v1.0.0 hostile.bpf.o\n", "go run example.com/fork/cmd/skelgen@v1.0.0 is not github.com/skelgen/skelgen/cmd/skelgen"},
		{"command", "", "//go:generate -command skelgen go run ./evil/cmd/skelgen\n//go:generate skelgen hostile.bpf.o\n", "go run ./evil/cmd/skelgen runs the package in "},
		{"exec", "", "//go:generate go run -exec=./x github.com/skelgen/skelgen/cmd/skelgen hostile.bpf.o\n", "go run flag -exec=./x: "},
		{"tool", module + "\ntool example.com/m/evil/cmd/skelgen\n", "//go:generate go tool skelgen hostile.bpf.o\n", "go tool skelgen runs example.com/m/evil/cmd/skelgen (go.mod's tool directive)"},
		{"notool", module, "//go:generate go tool skelgen hostile.bpf.o\n", "go tool skelgen: go.mod has no tool directive for github.com/skelgen/skelgen/cmd/skelgen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report, _, err := skelgenModule(t, tc.goMod, map[string]map[string]string{"p": {"gen.go": "package p\n\n" + tc.gen}})
			if err == nil || !strings.Contains(err.Error(), "gen.go:") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: err = %v, want one naming the line and %q\n%s", err, tc.want, report)
			}
		})
	}
}

// TestRefuseCompile: check compiles with the default compiler, clang or
// clang-N found on PATH outside the module, or the compiler it is told to
// trust, and never with -cflags that make clang load or run a program.
func TestRefuseCompile(t *testing.T) {
	mod := t.TempDir()
	outside, inside := t.TempDir(), filepath.Join(mod, "bin")
	for _, p := range []string{filepath.Join(outside, "clang-18"), filepath.Join(outside, "clang-19"), filepath.Join(inside, "clang-17"), filepath.Join(inside, "clang")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(inside, "clang-17"), filepath.Join(outside, "clang-16")); err != nil {
		t.Fatal(err)
	}
	both := outside + string(filepath.ListSeparator) + inside
	for _, tc := range []struct {
		path, cc, trusted, cflags string
		want                      string // in the error; "" for none
	}{
		{both, "", "", "", ""},
		{both, "", "", "-O2 -mcpu=v3 -I../include -DX=1 -Wall -Wno-unused -Wl,-O1 -Xclang -ast-dump -mllvm -bpf-expand-memcpy-in-order", ""},
		{both, "clang-18", "", "", ""},
		{both, "clang-15", "", "", ""}, // missing: compilerMissing names it
		{both, "clang-17", "", "", "C compiler " + filepath.Join(inside, "clang-17") + ", found on PATH, is inside the checked module: skelgen check runs no program of the checked tree (take the module's directories off PATH, or run skelgen check -cc clang-17 to trust it)"},
		{both, "clang-16", "", "", "is inside the checked module"},
		{both, "clang-17", "clang-17", "", ""},
		{inside, "", "", "", "C compiler " + filepath.Join(inside, "clang") + ", found on PATH, is inside the checked module: skelgen check runs no program of the checked tree (take the module's directories off PATH)"},
		{both, "./tools/cc.sh", "", "", "-cc ./tools/cc.sh: skelgen check compiles only with clang-19, clang or clang-N found on PATH, or with the compiler skelgen check -cc names (run skelgen check -cc ./tools/cc.sh to trust it)"},
		{both, "./tools/cc.sh", "./tools/cc.sh", "", ""},
		{both, "./tools/cc.sh", "tools/cc.sh", "", "run skelgen check -cc ./tools/cc.sh"},
		{both, filepath.Join(outside, "clang-18"), "", "", "skelgen check compiles only with"},
		{both, "python3", "", "", "run skelgen check -cc python3 to trust it"},
		{both, "gcc", "", "", "run skelgen check -cc gcc to trust it"},
		{both, "./tools/cc.sh", "./tools/cc.sh", "-O2 -fplugin=./p.so", "-cflags -fplugin=./p.so: loads a plugin, which skelgen check does not let a go:generate line do (remove it from the line, or run skelgen check -committed, which compiles nothing and trusts the committed objects)"},
		{both, "", "", "-fplugin ./p.so", "-cflags -fplugin: loads a plugin"},
		{both, "", "", "-fplugin-arg-x-y", "-cflags -fplugin-arg-x-y: loads a plugin"},
		{both, "", "", "-fpass-plugin=./p.so", "-cflags -fpass-plugin=./p.so: loads a plugin"},
		{both, "", "", "--hipspv-pass-plugin=./p.so", "loads a plugin"},
		{both, "", "", "-Xclang -load -Xclang ./p.so", "-cflags -load: loads a plugin"},
		{both, "", "", "-Xclang=-load -Xclang=./p.so", "-cflags -Xclang=-load: loads a plugin"},
		{both, "", "", "-Xclang -plugin -Xclang x", "-cflags -plugin: runs a plugin"},
		{both, "", "", "-Xclang -add-plugin -Xclang x", "-cflags -add-plugin: runs a plugin"},
		{both, "", "", "-mllvm -load=./p.so", "-cflags -load=./p.so: loads a plugin"},
		{both, "", "", "-mllvm=-load=./p.so", "-cflags -mllvm=-load=./p.so: loads a plugin"},
		{both, "", "", "-mllvm --load-pass-plugin=./p.so", "loads a plugin"},
		{both, "", "", "-Wp,-load,./p.so", "-cflags -Wp,-load,./p.so: loads a plugin"},
		{both, "", "", "-Xpreprocessor -load", "-cflags -load: loads a plugin"},
		{both, "", "", "-B./tools", "-cflags -B./tools: names where clang finds the programs it runs"},
		{both, "", "", "-B ./tools", "-cflags -B: names where clang finds"},
		{both, "", "", "--prefix=./tools", "names where clang finds"},
		{both, "", "", "--config=./x.cfg", "-cflags --config=./x.cfg: reads flags from a configuration file"},
		{both, "", "", "--config ./x.cfg", "reads flags from a configuration file"},
		{both, "", "", "--config-user-dir=./x", "reads flags from a configuration file"},
		{both, "", "", "@./flags.rsp", "-cflags @./flags.rsp: reads flags from a file"},
		{both, "", "", "-ccc-install-dir ./x", "names the programs clang runs"},
		{both, "", "", "-ccc-gcc-name x", "names the programs clang runs"},
		{both, "", "", "--gcc-toolchain=./x", "names where clang finds"},
		{both, "", "", "--gcc-install-dir=./x", "names where clang finds"},
		{both, "", "", "--sysroot=./x", "names where clang finds"},
		{both, "", "", "-fno-integrated-as", "runs an assembler program"},
		{both, "", "", "-fuse-ld=./ld", "runs a linker program"},
		{both, "", "", "--ld-path=./ld", "runs a linker program"},
		{both, "", "", "--cuda-path=./cuda", "names where clang finds"},
		{both, "", "", "--nvptx-arch-tool=./x", "runs a program"},
	} {
		t.Setenv("PATH", tc.path)
		cfg := Config{CC: tc.cc}
		if tc.cflags != "" {
			cfg.CFlags = strings.Fields(tc.cflags)
		}
		err := refuseCompile(cfg, tc.trusted, mod)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("-cc %q (trusted %q) -cflags %q: err = %v, want %q", tc.cc, tc.trusted, tc.cflags, err, tc.want)
		}
	}
}

// TestGenerateLinesAsGoGenerate: the skelgen lines check reads from a
// package, and their words, are those go generate -n prints.
func TestGenerateLinesAsGoGenerate(t *testing.T) {
	dir := t.TempDir()
	writeModule(t, dir, map[string][]byte{
		"go.mod": []byte("module example.com/g\n\ngo 1.26\n"),
		"a.go": []byte("package p\n\n//go:generate\tskelgen tab.bpf.o\n//go:generate   skelgen \"quoted $GOFILE\" spaces.bpf.o\n" +
			"//go:generate -command sk skelgen -pkg $GOPACKAGE\n//go:generate sk alias.bpf.o $GOLINE ${GOARCH}\n" +
			"//go:generate ./bin/skelgen bin.bpf.o\r\n// go:generate skelgen not.bpf.o\n//go:generate stringer -type T\n"),
		"b_test.go":  []byte("package p\n\n//go:generate skelgen test.bpf.o $DOLLAR $SKELGEN_TEST_UNSET\n"),
		"c_test.go":  []byte("package p_test\n\n//go:generate skelgen xtest.bpf.o $GOPACKAGE\n"),
		"gen.go":     []byte("//go:build generate\n\npackage p\n\n//go:generate skelgen tagged.bpf.o\n"),
		"ignored.go": []byte("//go:build ignore\n\npackage p\n\n//go:generate skelgen ignored.bpf.o\n"),
	})
	cmd := exec.Command("go", "generate", "-n", ".")
	cmd.Dir, cmd.Env = dir, scratchEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go generate -n: %v\n%s", err, out)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if cmd, _, _ := strings.Cut(l, " "); filepath.Base(cmd) == "skelgen" {
			want = append(want, l)
		}
	}
	lines, err := generateLines(&packages.Package{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(want) || len(want) != 7 {
		t.Fatalf("%d lines, go generate -n runs %d (want 7):\n%s", len(lines), len(want), out)
	}
	for i, gl := range lines {
		if !strings.HasSuffix(want[i], " "+strings.Join(gl.args, " ")) {
			t.Errorf("%s:%d: args %q, go generate -n runs %q", filepath.Base(gl.file), gl.line, gl.args, want[i])
		}
	}
}
