package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
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
	dir                     string // <module root>/internal/skelgenrt
	goMod                   string // <module root>/go.mod
	runtimePath, bridgePath string // their import paths
}

// ownModule is skelgen's own module path: its packages import the runtime
// they sit beside, and it carries no copy of it.
var ownModule = strings.TrimSuffix(RuntimeImport, "/runtime")

// moduleCopy finds the runtime copy of the module holding the package in
// dir, through the go.mod above it: above the directory the files land
// in, with symbolic links resolved, so that a link to a directory of
// another tree is that directory. In skelgen's own module it returns own:
// the package imports the runtime.
func moduleCopy(dir string) (rc runtimeCopy, own bool, err error) {
	real, err := resolveDir(dir)
	if err != nil {
		return runtimeCopy{}, false, err
	}
	root, mod, err := moduleOf(real)
	if err != nil {
		if abs, _ := filepath.Abs(dir); abs != real {
			err = fmt.Errorf("%w, where %s leads", err, dir)
		}
		return runtimeCopy{}, false, fmt.Errorf("-runtime vendor: %w (or use -runtime import)", err)
	}
	if mod == ownModule {
		return runtimeCopy{goMod: filepath.Join(root, "go.mod")}, true, nil
	}
	for _, pkg := range []string{"runtime", "bridge"} {
		if err := noSymlinks(root, filepath.Join(filepath.FromSlash(vendorDir), pkg)); err != nil {
			return runtimeCopy{}, false, fmt.Errorf("-runtime vendor: %w", err)
		}
	}
	base := path.Join(mod, vendorDir)
	return runtimeCopy{dir: filepath.Join(root, filepath.FromSlash(vendorDir)), goMod: filepath.Join(root, "go.mod"), runtimePath: base + "/runtime", bridgePath: base + "/bridge"}, false, nil
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

// vendorFiles returns the runtime and bridge sources as the files of the
// copy rc, with the bridge's import of the runtime rewritten to the copy's,
// each stamped with the skelgen version and the file it copies.
//
// The files of the runtime's VM (those marked //skelgen:vm) are in the copy
// only when vm is set: some object of the module has user-space programs.
// A kernel-only skeleton needs the maps part alone.
//
// A .go file in the copy that skelgen stamped but no longer writes (a
// runtime file renamed or removed in a later version) is marked for
// removal: left in place, it could define what the new files define. Files
// without the stamp are the user's and stay.
func vendorFiles(rc runtimeCopy, vm bool) ([]File, error) {
	var files []File
	written := map[string]bool{}
	for _, pkg := range []struct {
		name string
		src  fs.FS
	}{{"runtime", runtime.Sources}, {"bridge", bridge.Sources}} {
		names, err := fs.Glob(pkg.src, "*.go")
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") || name == "sources.go" {
				continue
			}
			data, err := fs.ReadFile(pkg.src, name)
			if err != nil {
				return nil, err
			}
			if !vm && isVMFile(data) {
				continue
			}
			data = bytes.ReplaceAll(data, []byte(`"`+RuntimeImport+`"`), []byte(`"`+rc.runtimePath+`"`))
			var b bytes.Buffer
			b.WriteString("// Code generated by skelgen " + Version + ". DO NOT EDIT.\n")
			b.WriteString("// Source: " + path.Join("github.com/skelgen/skelgen", pkgPath(pkg.name), name) + "\n")
			b.WriteString(copyComment + "\n\n")
			b.Write(data)
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

// vmMarker is the file of a runtime copy whose presence says the copy
// carries the VM: a later generate of a kernel-only skeleton keeps the VM
// current rather than removing what another skeleton of the module needs.
// A module that no longer has user-space programs drops the VM when its
// runtime copy is deleted and generated again.
const vmMarker = "runtime/machine.go"

// hasVM reports whether the runtime copy rc carries the VM.
func (rc runtimeCopy) hasVM() bool {
	data, err := readOutput(filepath.Join(rc.dir, filepath.FromSlash(vmMarker)))
	return err == nil && isStamped(data) && isVMFile(data)
}

// isStamped reports whether data is a file skelgen wrote into a runtime
// copy.
func isStamped(data []byte) bool {
	return bytes.HasPrefix(data, []byte("// Code generated by skelgen ")) && bytes.Contains(data, []byte("\n"+copyComment+"\n"))
}

// isVMFile reports whether the runtime source data belongs to the VM:
// a //skelgen:vm line before its package clause.
func isVMFile(data []byte) bool {
	head, _, _ := bytes.Cut(data, []byte("\npackage "))
	return bytes.Contains(append([]byte("\n"), head...), []byte("\n//skelgen:vm\n"))
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

// hasUserPrograms reports whether spec has user-space programs, which
// need the runtime's VM.
func hasUserPrograms(spec *ebpf.CollectionSpec) bool {
	for _, p := range spec.Programs {
		if bridge.IsUserProgram(p) {
			return true
		}
	}
	return false
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
