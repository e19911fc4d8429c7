package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/skelgen/skelgen/internal/version"
	"github.com/skelgen/skelgen/runtime"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// vendorDir is where a module keeps its one copy of the runtime (with
// -runtime vendor), relative to the module root: every skeleton package of
// the module imports it, so the wrapper types are the same types in all of
// them, and a nested module has its own.
const vendorDir = "internal/skelgenrt"

// Version names the skelgen that wrote a file, in its first line.
const Version = version.Version

// runtimeCopy is where the module holding a package keeps the runtime.
type runtimeCopy struct {
	root                    string // the module's root directory
	dir                     string // <module root>/internal/skelgenrt
	goMod                   string // <module root>/go.mod
	runtimePath, bridgePath string // their import paths
}

// VersionConst is the bridge's constant that only this release of skelgen
// declares (runtime/bridge/version.go): v0.1.0-dev's is SkelgenV0_1_0_dev.
var VersionConst = "Skelgen" + strings.Map(func(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
		return r
	}
	return '_'
}, strings.ToUpper(Version[:1])+Version[1:])

// requiresOwn reports whether the go.mod file requires skelgen's module.
func requiresOwn(goMod string) bool {
	data, err := readOutput(goMod)
	if err != nil {
		return false
	}
	mf, err := modfile.ParseLax(goMod, data, nil)
	if err != nil {
		return false
	}
	for _, r := range mf.Require {
		if r.Mod.Path == ownModule {
			return true
		}
	}
	return false
}

// ownModule is skelgen's own module path: its packages import the runtime
// they sit beside, and it carries no copy of it.
var ownModule = strings.TrimSuffix(RuntimeImport, "/runtime")

// moduleCopy finds the runtime copy of the module holding the package in
// dir, through the go.mod above it: above the directory the files land
// in, with symbolic links resolved, so that a link to a directory of
// another tree is that directory. In skelgen's own module it returns own:
// the package imports the runtime. mode names the -runtime flag in errors.
func moduleCopy(dir, mode string) (rc runtimeCopy, own bool, err error) {
	real, err := resolveDir(dir)
	if err != nil {
		return runtimeCopy{}, false, err
	}
	root, mod, err := moduleOf(real)
	if err != nil {
		if abs, _ := filepath.Abs(dir); abs != real {
			err = fmt.Errorf("%w, where %s leads", err, dir)
		}
		return runtimeCopy{}, false, fmt.Errorf("%s: %w (or use -runtime import)", mode, err)
	}
	if mod == ownModule {
		return runtimeCopy{goMod: filepath.Join(root, "go.mod")}, true, nil
	}
	for _, pkg := range []string{"runtime", "bridge"} {
		if err := noSymlinks(root, filepath.Join(filepath.FromSlash(vendorDir), pkg)); err != nil {
			return runtimeCopy{}, false, fmt.Errorf("%s: %w", mode, err)
		}
	}
	base := path.Join(mod, vendorDir)
	return runtimeCopy{root: root, dir: filepath.Join(root, filepath.FromSlash(vendorDir)), goMod: filepath.Join(root, "go.mod"), runtimePath: base + "/runtime", bridgePath: base + "/bridge"}, false, nil
}

// noSymlinks returns an error if a directory on the way from root to
// root/rel is a symbolic link: skelgen writes its runtime copy into the
// module's own directories, never through a link into another tree.
func noSymlinks(root, rel string) error {
	d := root
	for _, elem := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, elem)
		fi, err := os.Lstat(d)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: skelgen writes the runtime copy only into a directory of the module (remove the link)", d)
		}
	}
	return nil
}

// resolveDir returns the absolute form of dir with the symbolic links of
// its existing part resolved; the part still to be created is kept as it
// is.
func resolveDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var missing []string
	for d := abs; ; d = filepath.Dir(d) {
		real, err := filepath.EvalSymlinks(d)
		if err == nil {
			return filepath.Join(append([]string{real}, missing...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return "", err
		}
		missing = append([]string{filepath.Base(d)}, missing...)
	}
}

// moduleOf returns the root directory and module path of the module
// holding dir.
func moduleOf(dir string) (root, mod string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", "", fmt.Errorf("%s: no module line", filepath.Join(d, "go.mod"))
			}
			return d, mod, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("no go.mod above %s", abs)
		}
		d = parent
	}
}

// vendorFiles returns the files of the runtime copy rc for the roots
// refs (moduleRefs): of runtime.Sources and bridge.Sources, the
// declarations the roots name and those these need (pruneCopy; the
// bridge's selections from the runtime are roots of the runtime), with the
// bridge's import of the runtime rewritten to the copy's, each file
// stamped with the skelgen version and the file it copies. A package of
// which nothing is kept has no files; one that has gets a doc.go naming
// what it copies. The files are a function of the skelgen version, rc's
// import paths and refs.
//
// A .go file in the copy that skelgen stamped but no longer writes (a
// runtime file renamed or removed in a later version, or one whose
// declarations the module no longer needs) is marked for removal: left in
// place, it could define what the new files define. Files without the
// stamp are the user's and stay.
func vendorFiles(rc runtimeCopy, refs copyRefs) ([]File, error) {
	var files []File
	roots := map[string]bool{}
	maps.Copy(roots, refs["runtime"])
	for _, pkg := range []struct {
		name string
		src  fs.FS
	}{{"bridge", bridge.Sources}, {"runtime", runtime.Sources}} {
		srcs, err := copySources(pkg.src)
		if err != nil {
			return nil, err
		}
		for name, data := range srcs {
			srcs[name] = bytes.ReplaceAll(data, []byte(`"`+RuntimeImport+`"`), []byte(`"`+rc.runtimePath+`"`))
		}
		pkgRoots := refs[pkg.name]
		if pkg.name == "runtime" {
			pkgRoots = roots
		}
		pruned, xrefs, err := pruneCopy(srcs, pkgRoots, rc.runtimePath)
		if err != nil {
			return nil, fmt.Errorf("runtime copy: %s: %w", pkg.name, err)
		}
		maps.Copy(roots, xrefs)
		if len(pruned) > 0 {
			pruned["doc.go"] = []byte("// Package " + pkg.name + " is the part of " + path.Join(ownModule, pkgPath(pkg.name)) + ", skelgen " + Version + ",\n" +
				"// that this module's Go files use: the declarations they name and what\n" +
				"// those need. skelgen generate writes it; its documentation is that\n" +
				"// package's.\npackage " + pkg.name + "\n")
		}
		written := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(pruned)) {
			var b bytes.Buffer
			b.WriteString("// Code generated by skelgen " + Version + ". DO NOT EDIT.\n")
			b.WriteString("// Source: " + path.Join(ownModule, pkgPath(pkg.name), name) + "\n")
			b.WriteString(copyComment + "\n\n")
			b.Write(pruned[name])
			p := filepath.Join(rc.dir, pkg.name, name)
			files = append(files, File{Path: p, Data: b.Bytes()})
			written[p] = true
		}
		old, _ := filepath.Glob(filepath.Join(rc.dir, pkg.name, "*.go"))
		for _, path := range old {
			if written[path] {
				continue
			}
			if data, err := readOutput(path); err == nil && isStamped(data) {
				files = append(files, File{Path: path, Remove: true})
			}
		}
	}
	return files, nil
}

// moduleRefs adds to refs what the module's Go files name of its runtime
// copy rc (runtimeCopy.addRefs): every .go file of the module, tests too,
// but the copy's own, those of nested modules (a directory with a go.mod
// of its own) and those in directories the go command ignores (vendor,
// testdata, names starting with . or _). The files in pending (absolute
// paths) are skipped: the run is about to write or remove them, and their
// new contents are counted by the caller. Each directory and file it reads
// is told to read, for the generation cache.
func moduleRefs(rc runtimeCopy, pending map[string]bool, refs copyRefs, read func(string)) error {
	return filepath.WalkDir(rc.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("runtime copy: reading the module's Go files for what they name of it: %w", err)
		}
		if d.IsDir() {
			if p != rc.root {
				name := d.Name()
				if p == rc.dir || name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || fileExists(filepath.Join(p, "go.mod")) {
					return filepath.SkipDir
				}
			}
			read(p)
			return nil
		}
		if !strings.HasSuffix(p, ".go") || pending[p] || !d.Type().IsRegular() {
			return nil
		}
		read(p)
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("runtime copy: reading the module's Go files for what they name of it: %w", err)
		}
		rc.addRefs(refs, p, data)
		return nil
	})
}

// copyPlan is what a run writes for one runtime copy: the Go files of its
// module the run's lines write or remove (absolute paths) and what those
// name of it.
type copyPlan struct {
	rc      runtimeCopy
	pending map[string]bool
	refs    copyRefs
}

// copyPlans are a run's copyPlans by copy directory.
type copyPlans map[string]*copyPlan

// add counts the files a line that vendors rc generates.
func (ps copyPlans) add(rc runtimeCopy, files []File) {
	p := ps[rc.dir]
	if p == nil {
		p = &copyPlan{rc: rc, pending: map[string]bool{}, refs: copyRefs{}}
		ps[rc.dir] = p
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		// As moduleRefs finds it: below the module's root, links
		// resolved.
		dir, err := resolveDir(filepath.Dir(f.Path))
		if err != nil {
			continue
		}
		abs := filepath.Join(dir, filepath.Base(f.Path))
		p.pending[abs] = true
		if !f.Remove {
			rc.addRefs(p.refs, abs, f.Data)
		}
	}
}

// files returns the copy's files: for the roots of the plan's files and of
// the module's others on disk.
func (p *copyPlan) files(read func(string)) ([]File, error) {
	refs := copyRefs{}
	for pkg, names := range p.refs {
		for n := range names {
			refs.add(pkg, n)
		}
	}
	if err := moduleRefs(p.rc, p.pending, refs, read); err != nil {
		return nil, err
	}
	return vendorFiles(p.rc, refs)
}

// isStamped reports whether data is a file skelgen wrote into a runtime
// copy.
func isStamped(data []byte) bool {
	return bytes.HasPrefix(data, []byte("// Code generated by skelgen ")) && bytes.Contains(data, []byte("\n"+copyComment+"\n"))
}

// copyComment is the third line of every file of a runtime copy.
const copyComment = "// The module's copy of the skelgen runtime, shared by its skeleton packages (skelgen -runtime vendor)."

func pkgPath(name string) string {
	if name == "bridge" {
		return "runtime/bridge"
	}
	return "runtime"
}

// IsVendored reports whether a generated file belongs to a module's copy
// of the runtime.
func IsVendored(file string) bool {
	return strings.Contains("/"+filepath.ToSlash(file), "/"+vendorDir+"/")
}

// ciliumModule is the module whose packages (ebpf, link) a skeleton's
// API names, so that the user's module requires it directly.
const ciliumModule = "github.com/cilium/ebpf"

// directRequire returns goMod (a go.mod file) with ciliumModule required
// directly where it is required // indirect, as go mod tidy would have
// it once the skeleton imports it; ok is false when the file needs no
// change (no such requirement, or a direct one) or is not a go.mod skelgen
// can read.
func directRequire(goMod string) (f File, ok bool) {
	data, err := readOutput(goMod)
	if err != nil {
		return File{}, false
	}
	mf, err := modfile.Parse(goMod, data, nil)
	if err != nil {
		return File{}, false
	}
	var reqs []*modfile.Require
	for _, r := range mf.Require {
		if r.Mod.Path == ciliumModule && r.Indirect {
			ok = true
			r = &modfile.Require{Mod: r.Mod}
		}
		reqs = append(reqs, r)
	}
	if !ok {
		return File{}, false
	}
	mf.SetRequireSeparateIndirect(reqs)
	mf.Cleanup()
	out, err := mf.Format()
	if err != nil {
		return File{}, false
	}
	return File{Path: goMod, Data: out}, true
}
