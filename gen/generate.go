package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/btfmin"
	clang "github.com/skelgen/skelgen/internal/cc"
)

// Config is one run of the generator: everything the main command's flags
// say.
type Config struct {
	// Input is the .bpf.o or .bpf.c file.
	Input string
	// MoreInputs are C sources compiled like Input and linked with it
	// into one object, with libbpf's static linking (bpftool gen object):
	// one skeleton for all.
	MoreInputs []string
	// OutputDir receives the files; empty means the input's directory.
	OutputDir string
	// Package is the Go package name; empty means $GOPACKAGE, else the
	// package of the Go files already in the output directory, else the
	// directory's name.
	Package string
	// Stem names the outputs and prefixes identifiers; empty means the
	// input's base name without .bpf.c/.bpf.o.
	Stem string
	// Targets are the targets of a C input; nil means bpfel and bpfeb.
	// A prebuilt object has its own single target.
	Targets []Target
	// CC and CFlags compile a C input.
	CC     string
	CFlags []string
	// Types are extra C types to generate (-type).
	Types []string
	// Source, for an object input, is the C source it was built from,
	// read as a C input's source is: for its constants, record types and
	// host function parameter names (-src).
	Source string
	// MakeBase, when set, writes a make depfile per target with paths
	// relative to it.
	MakeBase string
	// ImportRuntime makes the package import the skelgen runtime instead
	// of carrying a copy of it (-runtime import).
	ImportRuntime bool
	// RuntimeAuto, with ImportRuntime unset, imports the runtime when the
	// module's go.mod requires skelgen's module (-runtime auto, the
	// default): the module then depends on skelgen already, and a copy
	// would repeat what go mod vendor carries. Otherwise it carries a copy.
	RuntimeAuto bool
	// AOT translates ubpf/ programs to Go (-aot).
	AOT bool
	// InterpretHooks, with AOT, leaves the hooks that run once or on a
	// timer (begin, end, interval, lost) to the interpreter and
	// translates the rest: record hooks, which run per record, and the
	// programs Go runs itself (-aot=auto, the default).
	InterpretHooks bool
	// Header, when set for a C input, is the minimal CO-RE header the
	// source includes: it is regenerated from the compiled object (see
	// btfmin) and written with the skeleton.
	Header string
	// HeaderBTF are the kernel BTF files the header is completed from;
	// nil means /sys/kernel/btf/vmlinux.
	HeaderBTF []string
	// Kernels, when set, is a directory of kernel BTF files (see
	// btfmin.ReadKernelDir): every kernel program's CO-RE relocations
	// must resolve on each, or be guarded, else the run fails with the
	// kernel matrix (btfmin.CheckKernels).
	Kernels string
	// BTFFor, when set, is a directory of kernel BTF files: the skeleton
	// of each target carries the minimal BTF its object's CO-RE
	// relocations need from each kernel (KernelBTFArchive), which Load
	// uses on a kernel without BTF of its own.
	BTFFor string
	// Committed compiles nothing: a C input's objects are read from the
	// files a previous run wrote (for checking without a compiler).
	Committed bool
	// Reads, when set, is told every file the run reads besides what
	// skelgen carries (the input, the headers the compiler read, the
	// kernel BTF of -header, the go.mod of the runtime copy's module),
	// for the generation cache (CacheRun.Read).
	Reads func(path string)
	// Warn, when set, receives warnings about the input that do not stop
	// the run (a .bpf.c that the Go tool would try to build, clang's
	// warnings as clang wrote them).
	Warn func(msg string)

	// headerDir is the directory the header is written to, set by
	// Generate: <vmlinux.h> finds it there, as "vmlinux.h" does.
	headerDir string
}

// compileOptions are the options of every compile of cfg's source for
// target t.
func (cfg Config) compileOptions(t Target, overlay map[string][]byte) CompileOptions {
	return CompileOptions{CC: cfg.CC, CFlags: cfg.CFlags, Source: cfg.Input, Target: t, Overlay: overlay, HeaderDir: cfg.headerDir}
}

// File is one output file.
type File struct {
	Path string
	Data []byte
	// Remove marks a file an earlier run generated and this one does not
	// (a translation after -aot=false): WriteFiles deletes it once the
	// new files are in place.
	Remove bool
}

// IsCSource reports whether the input is C source rather than an object.
func IsCSource(path string) bool { return strings.HasSuffix(path, ".c") }

// Generate runs the generator in memory and returns the files it would
// write: with -runtime vendor, the module's runtime copy too, for what the
// run's Go files and the module's others name of it (copyPlan).
func Generate(ctx context.Context, cfg Config) ([]File, error) {
	files, rc, err := generate(ctx, cfg)
	if err != nil || rc == nil {
		return files, err
	}
	plans := copyPlans{}
	plans.add(*rc, files)
	read := cfg.Reads
	if read == nil {
		read = func(string) {}
	}
	vendored, err := plans[rc.dir].files(read)
	if err != nil {
		return nil, err
	}
	return append(files, vendored...), nil
}

// generate is Generate without the runtime copy: it returns the copy the
// package imports, if it vendors one.
func generate(ctx context.Context, cfg Config) ([]File, *runtimeCopy, error) {
	if cfg.Input == "" {
		return nil, nil, errors.New("no input file")
	}
	for _, in := range append([]string{cfg.Input}, cfg.MoreInputs...) {
		if err := checkInput(withInput(cfg, in)); err != nil {
			return nil, nil, err
		}
	}
	outDir := cfg.OutputDir
	if outDir == "" {
		outDir = filepath.Dir(cfg.Input)
	}
	if cfg.Header != "" {
		path, err := headerPath(cfg, outDir)
		if err != nil {
			return nil, nil, err
		}
		cfg.headerDir = filepath.Dir(path)
	}
	stem := cfg.Stem
	if stem == "" {
		stem = DefaultStem(cfg.Input)
	}
	if !validStem(stem) {
		return nil, nil, fmt.Errorf("-stem %q: not a file name stem: letters, digits, _ and - only, not starting with -", stem)
	}
	pkg := cfg.Package
	if pkg == "" {
		pkg = os.Getenv("GOPACKAGE")
	}
	if pkg == "" {
		var err error
		if pkg, err = dirPackage(outDir, stem); err != nil {
			return nil, nil, err
		}
	}
	if !token.IsIdentifier(pkg) {
		return nil, nil, fmt.Errorf("package name %q is not a Go identifier", pkg)
	}
	read := func(paths ...string) {
		if cfg.Reads != nil {
			for _, p := range paths {
				cfg.Reads(p)
			}
		}
	}
	read(cfg.Input)
	read(cfg.MoreInputs...)
	if cfg.Header != "" {
		read(headerKernels(cfg)...)
	}

	type build struct {
		target Target
		obj    []byte
		deps   []string
		// consts are the sources' constants for the target, when
		// evaluated with the compile.
		consts []cConst
	}
	var builds []build
	var files []File
	var overlay map[string][]byte
	if cfg.Header != "" && len(cfg.MoreInputs) > 0 {
		return nil, nil, fmt.Errorf("-header %s: the minimal header is made from one source; with several (%s), include a header of your own", cfg.Header, strings.Join(append([]string{cfg.Input}, cfg.MoreInputs...), ", "))
	}
	if cfg.Header != "" && IsCSource(cfg.Input) && !cfg.Committed {
		first := Target{Clang: "bpfel"}
		if len(cfg.Targets) > 0 {
			first = cfg.Targets[0]
		}
		f, ov, err := prepareHeader(ctx, cfg, outDir, first)
		if err != nil {
			return nil, nil, err
		}
		files, overlay = append(files, f), ov
	}
	if IsCSource(cfg.Input) {
		// Every target's compile warns alike: say each warning once.
		warned := map[string]bool{}
		warnOnce := func(diags string) {
			if cfg.Warn != nil && !warned[diags] {
				warned[diags] = true
				cfg.Warn(diags)
			}
		}
		targets := cfg.Targets
		if targets == nil {
			targets = []Target{{Clang: "bpfel"}, {Clang: "bpfeb"}}
		}
		var compiled []compiledTarget
		if !cfg.Committed {
			compiled = compileTargets(ctx, cfg, targets, overlay)
		}
		for i, t := range targets {
			b := build{target: t}
			var err error
			if cfg.Committed {
				objPath := filepath.Join(outDir, stem+"_"+t.Suffix()+".o")
				if b.obj, err = os.ReadFile(objPath); err != nil {
					return nil, nil, fmt.Errorf("%s: no compiler run and no committed object: %w", cfg.Input, err)
				}
			} else {
				c := compiled[i]
				if c.err != nil {
					// The constants' compile failed too: its warning
					// would repeat clang's error.
					return nil, nil, c.err
				}
				for _, w := range append(c.warnings, c.constWarns...) {
					warnOnce(w)
				}
				if c.constErr != nil {
					return nil, nil, c.constErr
				}
				b.obj, b.deps, b.consts = c.obj, c.deps, c.consts
				read(b.deps...)
			}
			builds = append(builds, b)
		}
	} else {
		data, err := os.ReadFile(cfg.Input)
		if err != nil {
			return nil, nil, err
		}
		builds = append(builds, build{obj: data})
	}

	objs := make([]*Object, len(builds))
	for i, b := range builds {
		if IsCSource(cfg.Input) && !hasSection(b.obj, ".BTF") {
			return nil, nil, fmt.Errorf("%s: compiles to an object without BTF, so it defines no program, map or global variable: add one (see the README's recipe)", cfg.Input)
		}
		name := filepath.Base(cfg.Input)
		obj, err := ReadObject(name, b.obj)
		if err != nil {
			return nil, nil, err
		}
		// The embedded object carries no DWARF, whatever the input.
		stripped, err := StripDWARF(name, b.obj)
		if err != nil {
			return nil, nil, err
		}
		if len(stripped) != len(b.obj) {
			if obj, err = ReadObject(name, stripped); err != nil {
				return nil, nil, fmt.Errorf("%s: without DWARF: %w", name, err)
			}
			builds[i].obj = stripped
		}
		objs[i] = obj
	}
	warns, err := hookNearMisses(objs[0].Spec)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cfg.Input, err)
	}
	if cfg.Warn != nil {
		for _, w := range append(warns, runtimeDifferences(filepath.Base(cfg.Input), objs[0].Spec)...) {
			cfg.Warn(w)
		}
	}
	if cfg.Kernels != "" {
		var names []string
		var data [][]byte
		for i, b := range builds {
			t := b.target
			if !IsCSource(cfg.Input) {
				t = targetForOrder(objs[i].Order)
			}
			names, data = append(names, stem+"_"+t.Suffix()+".o"), append(data, b.obj)
		}
		read(cfg.Kernels) // its list of files
		if err := checkKernelMatrix(cfg.Kernels, names, data, read); err != nil {
			return nil, nil, err
		}
	}
	var kernelBTF []File // per build
	var carried [][]string
	if cfg.BTFFor != "" {
		ks, err := btfmin.ReadKernelDir(cfg.BTFFor)
		if err != nil {
			return nil, nil, fmt.Errorf("-btf-for: %w", err)
		}
		read(cfg.BTFFor) // its list of files
		for _, k := range ks {
			read(k.Path)
		}
		for i, b := range builds {
			t := b.target
			if !IsCSource(cfg.Input) {
				t = targetForOrder(objs[i].Order)
			}
			data, names, err := KernelBTFArchive(b.obj, ks)
			if err != nil {
				return nil, nil, fmt.Errorf("-btf-for: %s: %w", stem+"_"+t.Suffix()+".o", err)
			}
			kernelBTF = append(kernelBTF, File{Path: filepath.Join(outDir, kernelBTFFileName(stem, t)), Data: data})
			carried = append(carried, names)
		}
	}
	skelCfg := SkeletonConfig{Package: pkg, Stem: stem, Source: filepath.Base(cfg.Input), Types: cfg.Types, AOT: cfg.AOT, InterpretHooks: cfg.InterpretHooks}
	if cfg.Warn != nil {
		// Every target's translation tells alike: say it once.
		told := map[string]bool{}
		skelCfg.Warn = func(msg string) {
			if msg = filepath.Base(cfg.Input) + ": " + msg; !told[msg] {
				told[msg] = true
				cfg.Warn(msg)
			}
		}
	}
	if source := sourceFile(cfg); source != "" {
		if err := readSources(&skelCfg, append([]string{source}, cfg.MoreInputs...)); err != nil {
			return nil, nil, err
		}
	}
	var vendor *runtimeCopy
	if !cfg.ImportRuntime {
		mode := "-runtime vendor"
		if cfg.RuntimeAuto {
			mode = "-runtime auto (the default)"
		}
		rc, own, err := moduleCopy(outDir, mode)
		if err != nil {
			return nil, nil, err
		}
		read(rc.goMod)
		if !own {
			if f, ok := directRequire(rc.goMod); ok {
				// The skeleton's API names cilium/ebpf's types.
				files = append(files, f)
			}
			if !cfg.RuntimeAuto || !requiresOwn(rc.goMod) {
				skelCfg.RuntimeImport, skelCfg.BridgeImport = rc.runtimePath, rc.bridgePath
				vendor = &rc
			}
		}
	}
	required := typeArgs(cfg.Types)
	for i, b := range builds {
		obj := objs[i]
		if !IsCSource(cfg.Input) {
			b.target = targetForOrder(obj.Order)
		}
		base := stem + "_" + b.target.Suffix()
		sc := skelCfg
		sc.ObjectFile, sc.Target = base+".o", b.target
		if kernelBTF != nil {
			files = append(files, kernelBTF[i])
			sc.KernelBTFFile, sc.Kernels = filepath.Base(kernelBTF[i].Path), carried[i]
		} else if p := filepath.Join(outDir, kernelBTFFileName(stem, b.target)); isGzip(p) {
			// The kernels' BTF an earlier run with -btf-for wrote.
			files = append(files, File{Path: p, Remove: true})
		}
		if missing := missingTypes(obj, skelCfg); len(missing) > 0 && IsCSource(cfg.Input) {
			var raw []byte
			var err error
			if cfg.Committed {
				sc.SourceTypes, raw, err = committedTypes(outDir, stem, b.target)
				if errors.Is(err, os.ErrNotExist) && !anyRequired(missing, required) {
					// Only record types read from the source, none of
					// which the previous run found: there is no file.
					err = nil
				}
				if err != nil {
					return nil, nil, fmt.Errorf("%s: types %s are declared only in the source: no compiler run, and no committed types file: %w", cfg.Input, strings.Join(missing, ", "), err)
				}
			} else if sc.SourceTypes, raw, err = sourceTypes(ctx, withInput(cfg, typesSource(cfg, missing)), b.target, missing, required, overlay); err != nil {
				return nil, nil, err
			}
			if raw != nil {
				files = append(files, File{Path: filepath.Join(outDir, typesFileName(stem, b.target)), Data: raw})
			}
		}
		goPath := filepath.Join(outDir, base+".go")
		if source := sourceFile(cfg); source != "" {
			sc.Constants = b.consts
			if cfg.Committed || !IsCSource(cfg.Input) {
				cs, err := uncompiledConstants(ctx, cfg, b.target, goPath)
				if err != nil {
					return nil, nil, err
				}
				sc.Constants = cs
			}
		}
		src, aotSrc, err := Skeleton(obj, sc)
		if err != nil {
			return nil, nil, err
		}
		objPath := filepath.Join(outDir, base+".o")
		files = append(files, File{Path: goPath, Data: src}, File{Path: objPath, Data: b.obj})
		made := []string{goPath, objPath}
		aotPath := filepath.Join(outDir, base+"_aot.go")
		if aotSrc != nil {
			files = append(files, File{Path: aotPath, Data: aotSrc})
			made = append(made, aotPath)
		} else if old, err := readOutput(aotPath); err == nil && anyStamp.Match(firstLine(old)) {
			// A translation an earlier run wrote becomes a stub: go
			// generate lists the package's files before it runs the
			// lines, and fails on one removed under it.
			files = append(files, File{Path: aotPath, Data: aotStub(pkg)})
		}
		if cfg.MakeBase != "" && b.deps != nil {
			d, err := depfile(cfg.MakeBase, made, b.deps)
			if err != nil {
				return nil, nil, err
			}
			files = append(files, File{Path: goPath + ".d", Data: d})
		}
	}
	return files, vendor, nil
}

// isGzip reports whether the file path starts as gzip data.
func isGzip(path string) bool {
	if checkOutput(path) != nil {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 2)
	_, err = io.ReadFull(f, head)
	return err == nil && head[0] == 0x1f && head[1] == 0x8b
}

// DefaultStem derives the stem from an input file name: x.bpf.c → x.
func DefaultStem(input string) string {
	base := filepath.Base(input)
	for _, ext := range []string{".bpf.c", ".bpf.o", ".c", ".o"} {
		if strings.HasSuffix(base, ext) {
			base = strings.TrimSuffix(base, ext)
			break
		}
	}
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// validStem reports whether stem can name output files: it is one path
// element, with no separator, no leading dot or dash and nothing a
// //go:embed line would need to quote.
func validStem(stem string) bool {
	if stem == "" || stem[0] == '-' {
		return false
	}
	for _, c := range []byte(stem) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// packageName makes a Go package name from a directory name.
func packageName(dir string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(dir) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "bpf" + s
	}
	return s
}

// depfile writes a make rule: targets depend on deps, with paths relative to
// base (relative to the current directory when not absolute, as -makebase .).
func depfile(base string, targets, deps []string) ([]byte, error) {
	absBase, err := filepath.Abs(base)
	if err != nil {
		return nil, fmt.Errorf("-makebase %s: %w", base, err)
	}
	base = absBase
	rel := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		r, err := filepath.Rel(base, abs)
		if err != nil {
			return "", err
		}
		return strings.ReplaceAll(filepath.ToSlash(r), " ", "\\ "), nil
	}
	var b strings.Builder
	for i, t := range targets {
		r, err := rel(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r)
	}
	b.WriteString(":")
	ds := append([]string(nil), deps...)
	sort.Strings(ds)
	for _, d := range ds {
		r, err := rel(d)
		if err != nil {
			return nil, err
		}
		b.WriteString(" \\\n  " + r)
	}
	b.WriteString("\n")
	return []byte(b.String()), nil
}

// Unchanged reports whether f is a file to write that is on disk already,
// a regular file with exactly f's contents.
func Unchanged(f File) bool {
	if f.Remove {
		return false
	}
	fi, err := os.Lstat(f.Path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(f.Data)) {
		return false
	}
	old, err := os.ReadFile(f.Path)
	return err == nil && bytes.Equal(old, f.Data)
}

// WriteFiles writes files as a set: every file goes to a temporary file
// first, and only when all are written are they renamed into place. If a
// rename fails, the files already replaced get their old contents back,
// so a failed run leaves either the old set or the new one, and no
// directory it created. A file whose contents are on disk already is not
// written (Unchanged): its modification time stays, and make and go
// generate's users see only what changed. A path that exists and is not a
// regular file (checkOutput) fails the set before anything is written.
func WriteFiles(all []File) (err error) {
	var files, removals []File
	for _, f := range all {
		switch {
		case f.Remove:
			removals = append(removals, f)
		case !Unchanged(f):
			files = append(files, f)
		}
	}
	// Every directory the set writes to, once: where a killed run left
	// temporary files.
	seen := map[string]bool{}
	for _, f := range all {
		if d := filepath.Dir(f.Path); !f.Remove && !seen[d] {
			seen[d] = true
			removeTempFiles(d)
		}
	}
	defer func() {
		if err == nil {
			for _, f := range removals {
				if rerr := os.Remove(f.Path); rerr != nil && !os.IsNotExist(rerr) {
					err = rerr
				}
			}
		}
	}()
	var made []string // directories this call created, parents first
	defer func() {
		if err != nil {
			for i := len(made) - 1; i >= 0; i-- {
				os.Remove(made[i]) // only removes empty directories
			}
		}
	}()
	for _, f := range append(files, removals...) {
		if err := checkOutput(f.Path); err != nil {
			return err
		}
	}
	for _, f := range files {
		dirs, err := mkdirAll(filepath.Dir(f.Path))
		made = append(made, dirs...)
		if err != nil {
			return err
		}
	}
	var tmps, backups []string
	defer func() {
		for _, t := range append(tmps, backups...) {
			if t != "" {
				os.Remove(t)
			}
		}
	}()
	for _, f := range files {
		tmp, err := os.CreateTemp(filepath.Dir(f.Path), tempPrefix(f.Path)+"*")
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp.Name())
		if _, err := tmp.Write(f.Data); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Chmod(0o644); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
	}
	// Keep the old contents under a second name, so that a failed rename
	// can put back the files renamed before it.
	for i, f := range files {
		b := ""
		if _, err := os.Lstat(f.Path); err == nil {
			b = tmps[i] + ".old"
			if err := os.Link(f.Path, b); err != nil {
				return fmt.Errorf("keeping %s until the new files are in place: %w", f.Path, err)
			}
		}
		backups = append(backups, b)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], f.Path); err != nil {
			for j := i - 1; j >= 0; j-- {
				if backups[j] != "" {
					os.Rename(backups[j], files[j].Path)
				} else {
					os.Remove(files[j].Path)
				}
			}
			return err
		}
		tmps[i] = ""
	}
	return nil
}

// checkOutput returns an error unless path is absent or a regular file.
// skelgen writes an output by renaming a new file over it, and so only
// where the old one is a regular file too: a device, a FIFO, a socket or
// a directory is refused rather than replaced (renaming over /dev/null
// would turn it into a file), and so is a symbolic link, even to a
// regular file: renaming would replace the link, and writing through it
// would change a file elsewhere.
func checkOutput(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	kind := ""
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: skelgen writes its outputs only as files of their own (remove the link)", path)
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeDevice != 0:
		kind = "a device"
	default:
		kind = "a special file"
	}
	return fmt.Errorf("%s is %s, not a regular file: skelgen writes its outputs only as regular files, and replaces nothing else (name another path)", path, kind)
}

// readOutput returns the contents of an output on disk, which must be a
// regular file (checkOutput): anything else is an error before it is
// opened, as opening a FIFO would wait for a writer.
func readOutput(path string) ([]byte, error) {
	if err := checkOutput(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// tempPrefix starts the names of the temporary files WriteFiles writes
// path through: .NAME.tmp, then digits, and .old for the old contents it
// keeps until the new files are in place.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// isTempFile reports whether path is a temporary file of WriteFiles'.
func isTempFile(path string) bool {
	base := filepath.Base(path)
	if !strings.HasPrefix(base, ".") {
		return false
	}
	i := strings.LastIndex(base, ".tmp")
	if i < 0 {
		return false
	}
	digits := strings.TrimSuffix(base[i+len(".tmp"):], ".old")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// removeTempFiles removes what a killed WriteFiles left behind in dir: its
// temporary files, once a minute old (a WriteFiles of another process may
// be writing through younger ones).
func removeTempFiles(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || !isTempFile(t) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(t)
		}
	}
}

// mkdirAll creates dir and its missing parents, returning those it
// created, parents first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}

func anyRequired(names []string, required map[string]bool) bool {
	for _, n := range names {
		if required[n] {
			return true
		}
	}
	return false
}

// typeArgs returns the type names of -type arguments ("map=T" gives T).
func typeArgs(args []string) map[string]bool {
	names := map[string]bool{}
	for _, arg := range args {
		names[typeArgName(arg)] = true
	}
	return names
}

// typeArgName is the type a -type argument names: T of "T", "MAP=T" or
// "MAP=T!".
func typeArgName(arg string) string {
	if _, t, ok := strings.Cut(arg, "="); ok {
		arg = t
	}
	return strings.TrimSuffix(arg, "!")
}

// uncompiledConstants are the constants of the sources of a run that
// compiles nothing for target t: -committed, or an object input with -src,
// whose source is compiled only to evaluate them, when there is a
// compiler. Otherwise they are read back from the skeleton goFile an
// earlier run generated, as -committed reads its objects.
func uncompiledConstants(ctx context.Context, cfg Config, t Target, goFile string) ([]cConst, error) {
	sources := append([]string{sourceFile(cfg)}, cfg.MoreInputs...)
	if !cfg.Committed {
		if cc, err := clang.Find(cfg.CC); err == nil && lookPath(cc) {
			warn := func(string) {}
			if cfg.Warn != nil {
				warn = cfg.Warn
			}
			return targetConstants(ctx, cfg, t, nil, sources, warn)
		}
	}
	return committedConstants(goFile, sources), nil
}

// lookPath reports whether the command cc exists.
func lookPath(cc string) bool {
	_, err := exec.LookPath(cc)
	return err == nil
}

// sourceFile is the C source of the input: the input itself, or -src.
func sourceFile(cfg Config) string {
	if IsCSource(cfg.Input) {
		return cfg.Input
	}
	return cfg.Source
}

// missingTypes returns the names -type gives, the record types read from
// the source and the enums it defines that the object's BTF lacks.
func missingTypes(obj *Object, cfg SkeletonConfig) []string {
	var names []string
	seen := map[string]bool{}
	want := func(n string) {
		if n != "" && !seen[n] && !hasType(obj.Spec.Types, n) {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, arg := range cfg.Types {
		want(typeArgName(arg))
	}
	for _, name := range sortedNames(cfg.Records) {
		if m := obj.Spec.Maps[name]; m != nil && (m.Type == ebpf.RingBuf || m.Type == ebpf.PerfEventArray) {
			want(cfg.Records[name].Type)
		}
	}
	for _, tag := range cfg.SourceEnums {
		want("enum " + tag)
	}
	return names
}

// aotStub is what a translation file holds once no user program of the
// package is translated (-aot=false, or -aot=auto with hooks that run
// rarely only).
func aotStub(pkg string) []byte {
	return []byte(skeletonStamp + `

// This file held the Go translation of the package's user programs; they
// now run in the interpreter (-aot). skelgen leaves this stub in its place
// because go generate, which lists a package's files before it runs their
// go:generate lines, fails on a file removed under it. It may be deleted.

package ` + pkg + "\n")
}

// firstLine is data up to its first line end.
func firstLine(data []byte) []byte {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// withInput is cfg with input as its one source.
func withInput(cfg Config, input string) Config {
	cfg.Input, cfg.MoreInputs = input, nil
	return cfg
}
