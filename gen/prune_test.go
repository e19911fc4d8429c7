package gen

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// pruneSources is a runtime package for TestPruneCopy's cases.
var pruneSources = map[string][]byte{
	"a.go": []byte(`package p

import (
	"fmt"
	"strings"

	"example.com/rt"
)

// Kept is named by a root.
type Kept struct{ f field }

type field int

// Exported methods stay with their type.
func (k Kept) Show() string { return fmt.Sprint(helper()) }

// An unexported method nothing selects goes.
func (k Kept) unused() string { return strings.ToUpper(pulled()) }

// One something kept selects stays.
func (k *Kept) used() {}

func helper() int { return viaRuntime() }

// pulled is named only by what goes.
func pulled() string { return "" }

// Dropped is named by nothing kept.
func Dropped() rt.Machine { return rt.Machine{} }

// Mode's block is kept whole: B and C too.
type Mode int

const (
	A Mode = iota
	B
	C
)

var _ fmt.Stringer = Kept{}.Stringer()

var _ = Dropped
`),
	"b_linux.go": []byte(`package p

import "example.com/rt"

func viaRuntime() int { return rt.Linux }
`),
	"b_other.go": []byte(`//go:build !linux

package p

import "example.com/rt"

func viaRuntime() int { var next int; return rt.Other + next }
`),
	"c.go": []byte(`package p

// Uses keeps used and Mode.
func Uses(k *Kept) Mode { k.used(); return A }

func (Kept) Stringer() fmt.Stringer { return nil }

func next() {}

func init() { _ = uses2 }

var uses2 = 1
`),
}

// TestPruneCopy: the closure over a runtime package's declarations.
func TestPruneCopy(t *testing.T) {
	out, xrefs, err := pruneCopy(pruneSources, map[string]bool{"Uses": true, "Kept": true}, "example.com/rt")
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, name := range []string{"a.go", "b_linux.go", "b_other.go", "c.go"} {
		if out[name] == nil {
			t.Errorf("%s dropped", name)
		}
		all += string(out[name])
	}
	for _, want := range []string{
		"func (k Kept) Show()", "func (k *Kept) used()", "type field int", "func helper()",
		"B\n", "C\n", // the iota block whole
		"return rt.Linux", "return rt.Other", // both variants
		"func init()", "var uses2", "var _ fmt.Stringer = Kept{}.Stringer()",
		"// Exported methods stay with their type.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("pruned copy lacks %q", want)
		}
	}
	for _, gone := range []string{
		"unused", "pulled", "Dropped", "func next", // a local named next keeps no package-level next
		"strings", "// pulled is named", "rt.Machine",
	} {
		if strings.Contains(all, gone) {
			t.Errorf("pruned copy keeps %q:\n%s", gone, all)
		}
	}
	if !strings.Contains(string(out["a.go"]), `"fmt"`) || strings.Contains(string(out["a.go"]), `"example.com/rt"`) {
		t.Errorf("a.go's imports: fmt stays, example.com/rt (used only by Dropped) goes:\n%s", out["a.go"])
	}
	if got := slices.Sorted(maps.Keys(xrefs)); !slices.Equal(got, []string{"Linux", "Other"}) {
		t.Errorf("runtime names %v, want [Linux Other]", got)
	}
	// Nothing named: nothing but init and what it needs.
	out, _, err = pruneCopy(pruneSources, nil, "example.com/rt")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out["c.go"] == nil || strings.Contains(string(out["c.go"]), "Uses") {
		t.Errorf("without roots: %d files, c.go:\n%s", len(out), out["c.go"])
	}
}

// TestCopyFollowsModuleFiles: the copy holds what the module's Go files
// name of it. A file of the user's naming a bridge identifier a
// kernel-only copy lacks makes check report the copy stale; generate adds
// it, and the module builds. A file in testdata/ or a nested module counts
// for nothing.
func TestCopyFollowsModuleFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a module")
	}
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(mod, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	write("go.mod", []byte("module example.com/app\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"))
	write("go.sum", read("go.sum"))
	write("k/maps.bpf.o", read("internal/skeltest/maps/maps_bpfel.o"))
	write("k/gen.go", []byte("package k\n\n//go:generate skelgen -pkg k maps.bpf.o\n"))
	// Files that count for nothing: the copy does not grow for them.
	use := []byte("package x\n\nimport \"example.com/app/internal/skelgenrt/bridge\"\n\nvar _ = bridge.RawProgram\n")
	write("testdata/x/x.go", use)
	write("nested/go.mod", []byte("module example.com/app/nested\n"))
	write("nested/x.go", use)
	write("_x/x.go", use)
	generate := func() string {
		t.Helper()
		var out strings.Builder
		if err := GenerateAll(context.Background(), GenerateAllOptions{Patterns: []string{"./..."}, Dir: mod, Out: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	check := func() *CheckResult {
		t.Helper()
		res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	userPrograms := filepath.Join(mod, vendorDir, "bridge/user_programs.go")
	generate()
	if fileExists(userPrograms) {
		t.Fatal("a kernel-only copy holds the user-program support before anything names it")
	}
	if res := check(); len(res.Stale) != 0 {
		t.Fatalf("stale after generate: %v", res.Stale)
	}
	// The user names RawProgram: stale until generate adds it.
	write("main.go", []byte(`package main

import (
	"fmt"

	"example.com/app/internal/skelgenrt/bridge"
	"example.com/app/k"
)

func main() {
	o, err := k.LoadMaps(&k.MapsLoadOptions{InProcess: true})
	fmt.Println(o != nil, err, bridge.RawProgram != nil)
}
`))
	if res := check(); !slices.Contains(res.Stale, userPrograms) {
		t.Errorf("check after main.go names bridge.RawProgram: stale %v, want %s", res.Stale, userPrograms)
	}
	generate()
	if !fileExists(userPrograms) {
		t.Fatal("generate did not add what main.go names")
	}
	if res := check(); len(res.Stale) != 0 {
		t.Errorf("stale after generating again: %v", res.Stale)
	}
	if out := goIn(t, mod, "run", "."); !strings.Contains(out, "true <nil> true") {
		t.Errorf("go run printed %q", out)
	}
	// Generating again from the same tree writes the same copy.
	if out := generate(); !strings.Contains(out, "runtime copy: 0 files written") {
		t.Errorf("a second generate changed the copy:\n%s", out)
	}
}

// copyPlatforms are GOOS/GOARCH pairs a generated package builds for (see
// .ci/crossbuild): both byte orders, 32 and 64 bits, Linux and the others.
var copyPlatforms = []string{"linux/amd64", "linux/s390x", "linux/arm", "darwin/arm64", "windows/amd64"}

// TestPrunedCopyBuilds generates the pruned runtime copy of a module of
// kernel-only skeletons (execsnoop's and pslist's objects) and of one with
// user-space programs (syslat's and the ubpf test object) and builds and
// vets each module for every platform of copyPlatforms: pruning must leave
// all a platform's build needs. The second module then runs syslat in
// process from a small main: records through its user-space hooks to Go.
func TestPrunedCopyBuilds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short mode: builds modules for several platforms")
	}
	root := testenv.ModuleRoot(t)
	module := func(objects map[string]string) string {
		mod := t.TempDir()
		write := func(rel string, data []byte) {
			t.Helper()
			p := filepath.Join(mod, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		write("go.mod", []byte("module example.com/app\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"))
		write("go.sum", sum)
		for pkg, obj := range objects {
			data, err := os.ReadFile(filepath.Join(root, obj))
			if err != nil {
				t.Fatal(err)
			}
			write(pkg+"/"+pkg+".bpf.o", data)
			src := strings.TrimSuffix(obj, "_bpfel.o") + ".bpf.c"
			flags := ""
			if data, err := os.ReadFile(filepath.Join(root, src)); err == nil {
				// For the record types of its ring buffers.
				write(pkg+"/"+pkg+".bpf.c", data)
				flags = " -src " + pkg + ".bpf.c"
			}
			write(pkg+"/gen.go", []byte("package "+pkg+"\n\n//go:generate skelgen -pkg "+pkg+flags+" "+pkg+".bpf.o\n"))
		}
		if err := GenerateAll(context.Background(), GenerateAllOptions{Patterns: []string{"./..."}, Dir: mod}); err != nil {
			t.Fatal(err)
		}
		return mod
	}
	kernel := module(map[string]string{"execsnoop": "examples/execsnoop/execsnoop_bpfel.o", "pslist": "examples/pslist/pslist_bpfel.o"})
	user := module(map[string]string{"syslat": "examples/syslat/syslat_bpfel.o", "ubpf": "internal/skeltest/ubpf/ubpf_bpfel.o"})
	if fileExists(filepath.Join(kernel, vendorDir, "runtime/machine.go")) || !fileExists(filepath.Join(user, vendorDir, "runtime/machine.go")) {
		t.Fatal("the VM is in the kernel-only copy, or missing from the other")
	}
	goFor := func(mod, platform string, args ...string) {
		t.Helper()
		goos, goarch, _ := strings.Cut(platform, "/")
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go %s: %v\n%s", platform, strings.Join(args, " "), err, out)
		}
	}
	for _, mod := range []string{kernel, user} {
		for _, p := range copyPlatforms {
			goFor(mod, p, "build", "./...")
			goFor(mod, p, "vet", "./...")
		}
	}

	main := `package main

import (
	"bytes"
	"context"
	"fmt"
	"unsafe"

	"example.com/app/syslat"
)

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	spec, err := syslat.LoadSyslatSpec()
	check(err)
	check(spec.Variables.SlowNs.Set(20e6))
	check(spec.Variables.IntervalNs.Set(3600e9))
	check(spec.Variables.MaxRecords.Set(50))
	var out bytes.Buffer
	objs, err := spec.Load(&syslat.SyslatLoadOptions{InProcess: true, Output: &out})
	check(err)
	defer objs.Close()
	send := func(n int, e syslat.SyslatEvent) {
		for range n {
			check(objs.Events.Write(unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e))))
		}
	}
	send(100, syslat.SyslatEvent{Id: 39, LatNs: 2000, Pid: 42})
	send(5, syslat.SyslatEvent{Id: 35, LatNs: 50e6, Pid: 42})
	ctx, cancel := context.WithCancel(context.Background())
	slow := 0
	check(objs.Serve(ctx, &syslat.SyslatHandlers{OnEvents: func(e *syslat.SyslatEvent) {
		if slow++; slow == 5 {
			cancel()
		}
	}}))
	fmt.Printf("slow calls: %d\n%s", slow, out.String())
}
`
	if err := os.WriteFile(filepath.Join(user, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	out := goIn(t, user, "run", ".")
	if !strings.Contains(out, "slow calls: 5\n") || len(out) < len("slow calls: 5\n")+20 {
		t.Errorf("in-process syslat printed:\n%s", out)
	}
}

// TestCopyRefsOfUpstreamImports: a file naming skelgen's own bridge (code
// written before the first generate, pointed at the copy after it) roots
// what it names, as one naming the copy does; other packages root nothing.
func TestCopyRefsOfUpstreamImports(t *testing.T) {
	rc := runtimeCopy{runtimePath: "example.com/m/internal/skelgenrt/runtime", bridgePath: "example.com/m/internal/skelgenrt/bridge"}
	refs := copyRefs{}
	rc.addRefs(refs, "main.go", []byte(`package main

import (
	"github.com/skelgen/skelgen/runtime/bridge"
	rt "example.com/m/internal/skelgenrt/runtime"
	other "example.com/other/bridge"
)

var _ = bridge.IterRecords[int]
var _ = rt.ErrBudget
var _ = other.NotOurs
`))
	if !refs["bridge"]["IterRecords"] || !refs["runtime"]["ErrBudget"] || refs["bridge"]["NotOurs"] {
		t.Errorf("roots %v", refs)
	}
}
