package gen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
