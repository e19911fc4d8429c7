package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	clang "github.com/skelgen/skelgen/internal/cc"
)

// CompileOptions says how to build a .bpf.c file.
type CompileOptions struct {
	// CC is the compiler; empty means clang-19 if it is on PATH, else clang.
	CC string
	// CFlags are the user's flags; nil means cc.DefaultCFlags.
	CFlags []string
	// Source is the C file.
	Source string
	// Text, when set, is compiled instead of Source's contents, read from
	// standard input as if it were a file in Source's directory (quoted
	// includes and relative -I flags resolve there); nothing is written
	// beside the source.
	Text []byte
	// Target selects the byte order and architecture.
	Target Target
	// Overlay replaces files the source includes (absolute path →
	// contents) without touching the disk: the generator compiles against
	// a header it has made but not yet written. The paths need not exist.
	Overlay map[string][]byte
	// Warn, when set, receives clang's diagnostics of a compile that
	// succeeds with some (warnings), as clang wrote them.
	Warn func(diags string)
	// HeaderDir, when set, is the -header file's directory. It and the
	// source's directory are searched for #include <...> after the
	// user's and the system's directories, so that libbpf-tools'
	// #include <vmlinux.h> finds the header as "vmlinux.h" does.
	HeaderDir string
}

// stripFor returns the llvm-strip that belongs to the compiler cc.
func stripFor(cc string) string {
	base := filepath.Base(cc)
	if i := strings.LastIndex(base, "-"); i > 0 && strings.HasPrefix(base, "clang") {
		if p, err := exec.LookPath("llvm-strip" + base[i:]); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("llvm-strip"); err == nil {
		return p
	}
	return ""
}

// Compile builds opts.Source into a BPF object with BTF and without DWARF.
// The fixed flags make the output independent of the machine and the
// directory it is built in. It returns the object and the files the
// compiler read (for a make depfile).
func Compile(ctx context.Context, opts CompileOptions) (obj []byte, deps []string, err error) {
	cc, err := clang.Find(opts.CC)
	if err != nil {
		return nil, nil, err
	}
	src, err := filepath.Abs(opts.Source)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Dir(src)
	tmp, err := os.MkdirTemp("", "skelgen-cc-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out.o")
	dep := filepath.Join(tmp, "out.d")

	cflags := opts.CFlags
	if cflags == nil {
		cflags = strings.Fields(clang.DefaultCFlags)
	}
	args := []string{"-g", "-fno-ident", "-fdebug-prefix-map=" + dir + "=.", "-fdebug-compilation-dir=."}
	args = append(args, cflags...)
	args = append(args, opts.Target.Defines()...)
	if opts.HeaderDir != "" {
		args = append(args, "-idirafter", opts.HeaderDir)
	}
	args = append(args, "-idirafter", dir)
	// skelgen.h, the built-ins of user-space programs, is always on the
	// include path.
	inc, err := clang.IncludeArgs(tmp)
	if err != nil {
		return nil, nil, err
	}
	args = append(args, inc...)
	if len(opts.Overlay) > 0 {
		ov, err := writeOverlay(tmp, opts.Overlay)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "-ivfsoverlay", ov)
	}
	input := []string{filepath.Base(src)}
	if opts.Text != nil {
		input = []string{"-x", "c", "-"}
	}
	args = append(args, "-target", opts.Target.Clang, "-c")
	args = append(args, input...)
	args = append(args, "-o", out, "-MD", "-MF", dep)
	cmd := exec.CommandContext(ctx, cc, args...)
	cmd.Dir = dir
	if opts.Text != nil {
		cmd.Stdin = bytes.NewReader(opts.Text)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s: %s failed: %w\n%s%s", opts.Source, filepath.Base(cc), err, stderr.String(), clangHint(stderr.String(), opts.Target))
	}
	if opts.Warn != nil && stderr.Len() > 0 {
		opts.Warn(filepath.Base(cc) + " reports:\n" + strings.TrimRight(stderr.String(), "\n"))
	}
	if strip := stripFor(cc); strip != "" {
		cmd := exec.CommandContext(ctx, strip, "-g", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("%s: strip DWARF: %w\n%s", opts.Source, err, b)
		}
	}
	obj, err = os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	d, err := os.ReadFile(dep)
	if err != nil {
		return nil, nil, err
	}
	for _, dep := range parseDepfile(string(d), dir) {
		if !strings.HasPrefix(dep, tmp+string(filepath.Separator)) {
			deps = append(deps, dep)
		}
	}
	for p := range opts.Overlay {
		deps = append(deps, p)
	}
	return obj, deps, nil
}

// parseDepfile returns the prerequisites of a make depfile written by clang,
// absolute, in the order given.
func parseDepfile(d, dir string) []string {
	d = strings.ReplaceAll(d, "\\\n", " ")
	if i := strings.Index(d, ":"); i >= 0 {
		d = d[i+1:]
	}
	var deps []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			p := cur.String()
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			deps = append(deps, filepath.Clean(p))
			cur.Reset()
		}
	}
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c == '\\' && i+1 < len(d) && d[i+1] == ' ':
			cur.WriteByte(' ')
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return deps
}

// writeOverlay writes the overlay's files into dir and a clang VFS overlay
// description mapping their paths to them, and returns the description's
// path (for -ivfsoverlay).
func writeOverlay(dir string, files map[string][]byte) (string, error) {
	type entry struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		External string `json:"external-contents"`
	}
	type root struct {
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Contents []entry `json:"contents"`
	}
	byDir := map[string][]entry{}
	i := 0
	for _, p := range slices.Sorted(maps.Keys(files)) {
		ext := filepath.Join(dir, fmt.Sprintf("overlay%d", i))
		i++
		if err := os.WriteFile(ext, files[p], 0o644); err != nil {
			return "", err
		}
		byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], entry{filepath.Base(p), "file", ext})
	}
	var roots []root
	for _, d := range slices.Sorted(maps.Keys(byDir)) {
		roots = append(roots, root{d, "directory", byDir[d]})
	}
	data, err := json.Marshal(map[string]any{"version": 0, "case-sensitive": "true", "roots": roots})
	if err != nil {
		return "", err
	}
	yaml := filepath.Join(dir, "overlay.yaml")
	return yaml, os.WriteFile(yaml, data, 0o644)
}

var reHeaderNotFound = regexp.MustCompile(`fatal error: '([^']+)' file not found`)

// clangHint says what to do about clang's diagnostics of a failed compile
// for target t, when skelgen knows.
func clangHint(diags string, t Target) string {
	return missingHeaderHint(diags) + targetArchHint(diags, t)
}

// targetArchHint explains libbpf's error for a source that reads
// registers (bpf_tracing.h's PT_REGS_* macros, BPF_KPROBE, BPF_UPROBE,
// BPF_KSYSCALL) compiled for bpfel or bpfeb: registers differ per
// architecture, so such a source needs GOARCH targets.
func targetArchHint(diags string, t Target) string {
	if t.GOARCH != "" || !strings.Contains(diags, "Must specify a BPF target arch via __TARGET_ARCH_xxx") {
		return ""
	}
	return fmt.Sprintf("\nhint: the source reads registers through bpf_tracing.h (PT_REGS_*, BPF_KPROBE, BPF_UPROBE, BPF_KSYSCALL), whose layout differs per architecture, and target %s names none: "+
		"give the architectures it runs on as -target, e.g. -target amd64,arm64 (one object each, compiled with -D__TARGET_ARCH_x86, -D__TARGET_ARCH_arm64)", t.Clang)
}

// missingHeaderHint says what to do about a header clang did not find.
func missingHeaderHint(diags string) string {
	m := reHeaderNotFound.FindStringSubmatch(diags)
	if m == nil {
		return ""
	}
	switch h := m[1]; {
	case h == "vmlinux.h" || strings.HasSuffix(h, "/vmlinux.h"):
		return fmt.Sprintf("\nhint: add -header %s to the skelgen command: skelgen writes a minimal %s from the source and the kernel BTF (no full vmlinux.h needed)", h, h)
	case strings.HasPrefix(h, "bpf/"):
		return fmt.Sprintf("\nhint: %s comes with libbpf: install libbpf-dev (or libbpf-devel), or add -I<dir> to -cflags", h)
	default:
		return fmt.Sprintf("\nhint: add the directory holding %s to -cflags with -I<dir> (relative to the source's directory)", h)
	}
}
