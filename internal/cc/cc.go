// Package cc is the one definition of how skelgen runs the C compiler:
// which compiler (the -cc flag), how -cflags is split into words, and the
// include directories every compile gets (skelgen.h, the host's multiarch
// headers). The skeleton generator (gen) and the minimal-header generator
// (btfmin) both compile through it, so a flag means the same in every
// subcommand and skelgen.h is found by every compile skelgen runs.
package cc

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/skelgen/skelgen/templates"
)

// DefaultCFlags are the optimisation flags used when none are given.
const DefaultCFlags = "-O2 -mcpu=v3"

// Flags are the compiler flags every subcommand that compiles C accepts.
type Flags struct {
	// CC is the -cc value: empty means Find's default.
	CC string
	// CFlags is the -cflags value, split by Split.
	CFlags string
}

// Define registers -cc (with -clang as an alias, its former name in
// skelgen btfmin) and -cflags on fs.
func (f *Flags) Define(fs *flag.FlagSet) {
	fs.StringVar(&f.CC, "cc", "", "C `compiler` (default: clang-19, else clang)")
	fs.StringVar(&f.CC, "clang", "", "alias of -cc")
	fs.StringVar(&f.CFlags, "cflags", DefaultCFlags, "C compiler `flags`, split like a shell's words (quotes group)")
}

// Split returns the words of -cflags.
func (f *Flags) Split() ([]string, error) {
	words, err := Split(f.CFlags)
	if err != nil {
		return nil, fmt.Errorf("-cflags: %w", err)
	}
	return words, nil
}

// Find returns cc if set, else the first of clang-19 and clang on PATH.
func Find(cc string) (string, error) {
	if cc != "" {
		return cc, nil
	}
	for _, c := range []string{"clang-19", "clang"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no C compiler: neither clang-19 nor clang is on PATH (install clang-19, use -cc, or give a prebuilt .bpf.o)")
}

// IncludeArgs writes skelgen.h into dir/include and returns the flags that
// put it on the include path, after the user's directories so that a local
// copy wins, followed by the host's multiarch include directory:
// distributions keep <asm/types.h> there, and clang does not search it for
// the bpf target. dir is the caller's temporary directory.
func IncludeArgs(dir string) ([]string, error) {
	inc := filepath.Join(dir, "include")
	if err := os.MkdirAll(inc, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(inc, "skelgen.h"), templates.SkelgenH, 0o644); err != nil {
		return nil, err
	}
	args := []string{"-idirafter", inc}
	if m := multiarchInclude(); m != "" {
		args = append(args, "-idirafter", m)
	}
	return args, nil
}

// multiarchInclude returns the host's multiarch include directory, if any.
func multiarchInclude() string {
	triple := map[string]string{
		"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "386": "i386-linux-gnu",
		"arm": "arm-linux-gnueabihf", "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu",
		"riscv64": "riscv64-linux-gnu", "loong64": "loongarch64-linux-gnu",
	}[goruntime.GOARCH]
	if triple == "" {
		return ""
	}
	dir := filepath.Join("/usr/include", triple)
	if _, err := os.Stat(filepath.Join(dir, "asm")); err != nil {
		return ""
	}
	return dir
}

// Split splits a -cflags value into words, honouring single and double
// quotes.
func Split(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
