package gen

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	clang "github.com/skelgen/skelgen/internal/cc"
)

// clangName matches the compilers check compiles with when a line names
// them by -cc: clang and clang-N, found on PATH.
var clangName = regexp.MustCompile(`^clang(-[0-9]+)?$`)

// codeFlags are the compiler flags that make clang load or run a program
// other than itself, matched as prefixes of a -cflags word (and of the
// words it forwards: -Xclang=, -mllvm=, -Wp,): plugins, the directories
// it finds the assembler, linker and other tools in, configuration and
// response files, which can hold any flag.
var codeFlags = []struct{ prefix, does string }{
	{"@", "reads flags from a file"},
	{"--config", "reads flags from a configuration file"},
	{"-fplugin", "loads a plugin"},
	{"-fpass-plugin", "loads a plugin"},
	{"--hipspv-pass-plugin", "loads a plugin"},
	{"-load", "loads a plugin"}, // -Xclang -load, -mllvm -load=
	{"--load", "loads a plugin"},
	{"-plugin", "runs a plugin"},
	{"-add-plugin", "runs a plugin"},
	{"-B", "names where clang finds the programs it runs"},
	{"--prefix", "names where clang finds the programs it runs"},
	{"-ccc-", "names the programs clang runs"},
	{"--gcc-", "names where clang finds the programs it runs"},
	{"-gcc-toolchain", "names where clang finds the programs it runs"},
	{"--sysroot", "names where clang finds the programs it runs"},
	{"-fno-integrated-as", "runs an assembler program"},
	{"-no-integrated-as", "runs an assembler program"},
	{"-fuse-ld", "runs a linker program"},
	{"--ld-path", "runs a linker program"},
	{"--cuda-path", "names where clang finds the programs it runs"},
	{"--hip-path", "names where clang finds the programs it runs"},
	{"--rocm-path", "names where clang finds the programs it runs"},
	{"--ptxas-path", "runs a program"},
	{"--dxv-path", "runs a program"},
	{"--amdgpu-arch-tool", "runs a program"},
	{"--nvptx-arch-tool", "runs a program"},
}

// refuseCompile returns why skelgen check does not compile a line's C
// sources with cfg, or nil. Check compiles only with a compiler it trusts:
// the default (clang-19, else clang, on PATH), clang or clang-N on PATH,
// each outside the module at modDir, or the one it was told to trust
// (skelgen check -cc: trusted, the -cc a line names literally). And it
// gives clang no flag of codeFlags, whatever the compiler.
func refuseCompile(cfg Config, trusted, modDir string) error {
	for _, w := range cfg.CFlags {
		parts := []string{w}
		if _, v, ok := strings.Cut(w, "="); ok && (strings.HasPrefix(w, "-X") || strings.HasPrefix(w, "-mllvm=")) {
			parts = append(parts, v)
		}
		if len(w) > 4 && strings.HasPrefix(w, "-W") && w[3] == ',' {
			parts = append(parts, strings.Split(w[4:], ",")...)
		}
		for _, p := range parts {
			for _, f := range codeFlags {
				if strings.HasPrefix(p, f.prefix) {
					return fmt.Errorf("-cflags %s: %s, which skelgen check does not let a go:generate line do (remove it from the line, or run skelgen check -committed, which compiles nothing and trusts the committed objects)", w, f.does)
				}
			}
		}
	}
	cc := cfg.CC
	if cc != "" && cc == trusted {
		return nil
	}
	if cc != "" && !clangName.MatchString(cc) {
		return fmt.Errorf("-cc %s: skelgen check compiles only with clang-19, clang or clang-N found on PATH, or with the compiler skelgen check -cc names (run skelgen check -cc %s to trust it)", cc, cc)
	}
	path, err := clang.Find(cc)
	if err == nil && cc != "" {
		path, err = exec.LookPath(cc)
	}
	if err != nil || modDir == "" {
		return nil // missing: compilerMissing says so
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, p := range []string{path, real} {
		if r, err := filepath.Rel(modDir, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			remedy := "take the module's directories off PATH"
			if cc != "" {
				remedy += ", or run skelgen check -cc " + cc + " to trust it"
			}
			return fmt.Errorf("C compiler %s, found on PATH, is inside the checked module: skelgen check runs no program of the checked tree (%s)", path, remedy)
		}
	}
	return nil
}
