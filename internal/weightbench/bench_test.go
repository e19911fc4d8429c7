//go:build linux

package weightbench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	bpf2go "github.com/cilium/ebpf/cmd/bpf2go/gen"

	"github.com/skelgen/skelgen/gen"
	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// object is one BPF object the benchmark generates both packages of.
type object struct {
	name string // ex.execsnoop, corpus.netpeek, cilium.kprobe
	path string
	stem string // execsnoop, bpf: names the generated files and identifiers
}

// objects lists the examples' bpfel objects, testdata/corpus's, and the
// committed bpfel objects of cilium/ebpf's examples in the module cache.
func objects(b *testing.B, root string) []object {
	var objs []object
	add := func(prefix, pattern string, name func(path, stem string) string) {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			b.Fatalf("no objects match %s", pattern)
		}
		for _, p := range paths {
			stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), "_bpfel.o"), ".bpf.o")
			objs = append(objs, object{prefix + "." + name(p, stem), p, stem})
		}
	}
	byStem := func(_, stem string) string { return stem }
	add("ex", filepath.Join(root, "examples", "*", "*_bpfel.o"), byStem)
	add("corpus", filepath.Join(root, "testdata", "corpus", "*.bpf.o"), byStem)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cilium/ebpf")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("go list -m github.com/cilium/ebpf: %v", err)
	}
	add("cilium", filepath.Join(strings.TrimSpace(string(out)), "examples", "*", "*_bpfel.o"), func(p, _ string) string {
		return filepath.Base(filepath.Dir(p))
	})
	return objs
}

// scratchModule writes into dir an empty module requiring cilium/ebpf,
// with skelgen's go.sum, and returns dir.
func scratchModule(b *testing.B, dir, root, path string) string {
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		b.Fatal(err)
	}
	writeFile(b, filepath.Join(dir, "go.sum"), sum)
	writeFile(b, filepath.Join(dir, "go.mod"), []byte("module "+path+"\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"))
	return dir
}

func writeFile(b *testing.B, path string, data []byte) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// skelgen generates the skeleton of the object at input into its
// directory as the skelgen command does with args before the input.
func skelgen(input string, args ...string) error {
	fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := gen.NewFlags(fs)
	if err := fs.Parse(append(args, input)); err != nil {
		return err
	}
	cfg, err := flags.Config(fs.Args())
	if err != nil {
		return err
	}
	files, err := gen.Generate(context.Background(), cfg)
	if err != nil {
		return err
	}
	return gen.WriteFiles(files)
}

// bpf2goGenerate writes into dir what bpf2go writes for the bpfel object
// data with stem and package name: as its command does after compiling
// (maps but .rodata and the like, every variable and program, the global
// types, the little-endian architectures' constraint), and the object.
func bpf2goGenerate(dir, pkgName, stem string, data []byte) error {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var maps, vars, progs []string
	for n := range spec.Maps {
		if !strings.HasPrefix(n, ".") {
			maps = append(maps, n)
		}
	}
	for n := range spec.Variables {
		vars = append(vars, n)
	}
	for n := range spec.Programs {
		progs = append(progs, n)
	}
	_, arches, err := bpf2go.FindTarget("bpfel")
	if err != nil {
		return err
	}
	var src bytes.Buffer
	err = bpf2go.Generate(bpf2go.GenerateArgs{
		Package: pkgName, Stem: stem, Constraints: arches.Constraint(), Maps: maps, Variables: vars, Programs: progs,
		Types: bpf2go.CollectGlobalTypes(spec), ObjectFile: stem + "_bpfel.o", Output: &src,
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, stem+"_bpfel.o"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stem+"_bpfel.go"), src.Bytes(), 0o644)
}

// hasUserPrograms reports whether the object has ubpf/ programs, which
// put the VM in its module's runtime copy.
func hasUserPrograms(data []byte) bool {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
	if err != nil {
		return false
	}
	for _, p := range spec.Programs {
		if bridge.IsUserProgram(p) {
			return true
		}
	}
	return false
}

// lines counts the non-blank lines and the .go files in dir and below, the
// nonce file left out.
func lines(b *testing.B, dir string) (n, files int) {
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || d.Name() == nonceFile {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n, files
}

// goBuild runs go build with args in the module dir.
func goBuild(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	return cmd.CombinedOutput()
}

// failedPackage matches the line go build prints above a package's errors.
var failedPackage = regexp.MustCompile(`(?m)^# (\S+)\n(.*)`)

// module is a scratch module of skeleton packages.
type module struct {
	dir, path string
	// pkgs are the packages of each object: skelgen's, bpf2go's.
	pkgs map[string][2]pkg
}

// pkgDir is the package id of kind s (skelgen's) or b (bpf2go's).
func (m *module) pkgDir(kind, id string) pkg {
	return pkg{m.path + "/" + kind + "/" + id, filepath.Join(m.dir, kind, id)}
}

// copyPkgs are the packages of the module's runtime copy.
func (m *module) copyPkgs() []pkg {
	var ps []pkg
	for _, name := range []string{"runtime", "bridge"} {
		ps = append(ps, pkg{m.path + "/internal/skelgenrt/" + name, filepath.Join(m.dir, "internal", "skelgenrt", name)})
	}
	return ps
}

// compileRounds is how many times each package is compiled: a compile of
// a few hundred lines takes tens of milliseconds, whose CPU time varies by
// a third from one compile to the next on a shared machine; the figures
// are the medians.
const compileRounds = 3

// measure compiles every package of the modules, their runtime copies
// too, compileRounds times, one go build per module and round (the go
// command's own work, loading and hashing, is a fixed cost per build), and
// returns each package's compiles by import path.
func measure(b *testing.B, bd *builder, mods ...*module) map[string][]usage {
	all := map[string][]usage{}
	for range compileRounds {
		for _, m := range mods {
			if len(m.pkgs) == 0 {
				continue
			}
			ps := m.copyPkgs()
			for _, pair := range m.pkgs {
				ps = append(ps, pair[:]...)
			}
			got, err := bd.compile(m.dir, ps...)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range ps {
				all[p.path] = append(all[p.path], got[p.path])
			}
		}
	}
	return all
}

// medians returns the median CPU (ms) and peak memory (MiB) of compiles,
// each compile the sum of the CPU and the largest peak of its packages'.
func medians(compiles ...[]usage) (cpuMs, rssMiB float64) {
	var cpu, rss []float64
	for i := range compiles[0] {
		var c, r float64
		for _, u := range compiles {
			c += u[i].cpu.Seconds() * 1e3
			r = max(r, float64(u[i].rssKiB)/1024)
		}
		cpu, rss = append(cpu, c), append(rss, r)
	}
	return median(cpu), median(rss)
}

func median(vs []float64) float64 {
	vs = slices.Sorted(slices.Values(vs))
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

// corpus is the scratch modules of the objects' generated packages, the
// objects left out, and the packages' figures.
type corpus struct {
	kern, vm *module
	skipped  map[string]string
	compiles map[string][]usage // by import path
	lines    map[string]int     // by import path; the runtime copy's by module directory
	files    map[string]int     // the runtime copy's, by module directory
}

// measured is one object's figures: compile CPU, peak memory and lines
// of its skelgen package and of its bpf2go package.
type measured struct {
	name                  string
	kernelOnly            bool // no ubpf/ programs
	cpuMs, rssMiB, nlines [2]float64
}

// BenchmarkWeight generates the skelgen package and the bpf2go package of
// each object and reports, per object, the median compile CPU (ms) and
// the compiler's peak memory (MiB) of each package, its non-blank lines
// and the ratios; their sums over the objects both generators took; the
// runtime copy's compile CPU, lines and files in a module of kernel-only
// objects and in one with ubpf/ programs; the binary of an execsnoop
// tool on each; and the time of a no-op skelgen generate over 50 skeleton
// packages. The packages are generated and compiled once, by the first
// sub-benchmark that needs them (the per-object results, total and the
// runtime copies report those figures, and their ns/op means nothing);
// run it with -benchtime 1x (as make bench does), as an iteration of
// binary is two go builds.
func BenchmarkWeight(b *testing.B) {
	needGo(b)
	root := testenv.ModuleRoot(b)
	objs := objects(b, root)
	bd := newBuilder(b)
	kernDir, vmDir := b.TempDir(), b.TempDir()
	var (
		once sync.Once
		c    *corpus
	)
	get := func(b *testing.B) *corpus {
		once.Do(func() { c = build(b, root, objs, bd, kernDir, vmDir) })
		if c == nil {
			b.Fatal("the generated packages could not be built: see the first failure")
		}
		return c
	}

	var results []measured
	for _, o := range objs {
		b.Run(o.name, func(b *testing.B) {
			c := get(b)
			b.ResetTimer() // the first one built the packages
			if why, ok := c.skipped[o.name]; ok {
				b.Skip(why)
			}
			ps, ok := c.kern.pkgs[o.name]
			if !ok {
				ps = c.vm.pkgs[o.name]
			}
			r := measured{name: o.name, kernelOnly: ok}
			for i, p := range ps {
				r.nlines[i] = float64(c.lines[p.path])
				r.cpuMs[i], r.rssMiB[i] = medians(c.compiles[p.path])
			}
			reportPair(b, "cpu-ms", r.cpuMs)
			reportPair(b, "rss-MiB", r.rssMiB)
			reportPair(b, "lines", r.nlines)
			results = slices.DeleteFunc(results, func(x measured) bool { return x.name == o.name })
			results = append(results, r)
		})
	}
	b.Run("total", func(b *testing.B) {
		if len(results) == 0 {
			b.Skip("no object measured")
		}
		var sum, kern measured
		worst, worstName := 0.0, ""
		for _, r := range results {
			for i := range 2 {
				sum.cpuMs[i] += r.cpuMs[i]
				sum.nlines[i] += r.nlines[i]
				if r.kernelOnly {
					kern.cpuMs[i] += r.cpuMs[i]
					kern.nlines[i] += r.nlines[i]
				}
			}
			if ratio := r.cpuMs[0] / r.cpuMs[1]; ratio > worst {
				worst, worstName = ratio, r.name
			}
		}
		reportPair(b, "cpu-ms", sum.cpuMs)
		reportPair(b, "lines", sum.nlines)
		// The objects without ubpf/ programs: what bpf2go generates too,
		// without translations.
		b.ReportMetric(kern.cpuMs[0]/kern.cpuMs[1], "kernel-only-cpu-ratio")
		b.ReportMetric(kern.nlines[0]/kern.nlines[1], "kernel-only-lines-ratio")
		b.ReportMetric(float64(len(results)), "objects")
		b.ReportMetric(float64(len(c.skipped)), "left-out")
		b.ReportMetric(worst, "worst-cpu-ratio")
		b.Logf("worst compile CPU ratio: %s", worstName)
		var left []string
		for name, why := range c.skipped {
			left = append(left, name+": "+why)
		}
		sort.Strings(left)
		b.Logf("%d objects left out:\n%s", len(left), strings.Join(left, "\n"))
	})
	for _, m := range []struct {
		name string
		kern bool
	}{{"runtime-kernel-only", true}, {"runtime-with-vm", false}} {
		b.Run(m.name, func(b *testing.B) {
			c := get(b)
			b.ResetTimer() // the first one built the packages
			mod := c.vm
			if m.kern {
				mod = c.kern
			}
			if len(mod.pkgs) == 0 {
				b.Skip("no skeleton package in this module")
			}
			var ps [][]usage
			for _, p := range mod.copyPkgs() {
				ps = append(ps, c.compiles[p.path])
			}
			cpuMs, rssMiB := medians(ps...)
			b.ReportMetric(cpuMs, "cpu-ms")
			b.ReportMetric(rssMiB, "rss-MiB")
			b.ReportMetric(float64(c.lines[mod.dir]), "lines")
			b.ReportMetric(float64(c.files[mod.dir]), "files")
		})
	}
	b.Run("binary", func(b *testing.B) { benchBinary(b, root) })
	b.Run("noop-regen", func(b *testing.B) { benchRegen(b, root, objs) })
}

// build writes the skelgen package and the bpf2go package of each object
// into one of two scratch modules, in kernDir for the objects without
// ubpf/ programs and in vmDir for those with, builds everything once,
// counts the lines, and measures the compiles. A generated package that
// does not compile takes its object out.
func build(b *testing.B, root string, objs []object, bd *builder, kernDir, vmDir string) *corpus {
	kern := &module{dir: kernDir, path: "example.com/kern", pkgs: map[string][2]pkg{}}
	vm := &module{dir: vmDir, path: "example.com/vm", pkgs: map[string][2]pkg{}}
	c := &corpus{kern: kern, vm: vm, skipped: map[string]string{}, lines: map[string]int{}, files: map[string]int{}}
	for _, m := range []*module{kern, vm} {
		scratchModule(b, m.dir, root, m.path)
	}
	for _, o := range objs {
		data, err := os.ReadFile(o.path)
		if err != nil {
			b.Fatal(err)
		}
		m := kern
		if hasUserPrograms(data) {
			m = vm
		}
		id := strings.NewReplacer(".", "_", "-", "_").Replace(o.name)
		s, g := m.pkgDir("s", id), m.pkgDir("b", id)
		input := filepath.Join(s.dir, o.stem+".bpf.o")
		writeFile(b, input, data)
		if err := skelgen(input, "-pkg", id); err != nil {
			c.skipped[o.name] = fmt.Sprintf("skelgen refuses it: %v", err)
			os.RemoveAll(s.dir)
			continue
		}
		if err := bpf2goGenerate(g.dir, id, o.stem, data); err != nil {
			c.skipped[o.name] = fmt.Sprintf("bpf2go refuses it: %v", err)
			os.RemoveAll(s.dir)
			os.RemoveAll(g.dir)
			continue
		}
		m.pkgs[o.name] = [2]pkg{s, g}
	}
	for _, m := range []*module{kern, vm} {
		for len(m.pkgs) > 0 {
			out, err := goBuild(m.dir, "./...")
			if err == nil {
				break
			}
			failed := false
			for _, f := range failedPackage.FindAllStringSubmatch(string(out), -1) {
				for name, ps := range m.pkgs {
					for i, p := range ps {
						if p.path == f[1] {
							c.skipped[name] = fmt.Sprintf("%s's package does not compile: %s", [2]string{"skelgen", "bpf2go"}[i], f[2])
							os.RemoveAll(ps[0].dir)
							os.RemoveAll(ps[1].dir)
							delete(m.pkgs, name)
							failed = true
						}
					}
				}
			}
			if !failed {
				b.Fatalf("go build ./... in the scratch module: %v\n%s", err, out)
			}
		}
		for _, ps := range m.pkgs {
			for _, p := range ps {
				c.lines[p.path], _ = lines(b, p.dir)
			}
		}
		c.lines[m.dir], c.files[m.dir] = lines(b, filepath.Join(m.dir, "internal", "skelgenrt"))
	}
	c.compiles = measure(b, bd, kern, vm)
	return c
}

// reportPair reports a figure of skelgen's package and of bpf2go's, and
// their ratio.
func reportPair(b *testing.B, unit string, v [2]float64) {
	b.ReportMetric(v[0], "skelgen-"+unit)
	b.ReportMetric(v[1], "bpf2go-"+unit)
	if v[1] > 0 {
		b.ReportMetric(v[0]/v[1], unit+"-ratio")
	}
}

// The execsnoop tool: load, attach, print each record of the ring buffer
// until interrupted; on skelgen's skeleton (its typed reader) and on
// bpf2go's (cilium/ebpf's link and ringbuf packages).
const (
	skelgenTool = `package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	objs, err := LoadExecsnoop(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer objs.Close()
	if err := objs.AttachAll(); err != nil {
		log.Fatal(err)
	}
	rd, err := objs.Events.NewReader()
	if err != nil {
		log.Fatal(err)
	}
	go func() { <-ctx.Done(); rd.Close() }()
	for {
		rec, err := rd.ReadRecord()
		if err != nil {
			return
		}
		ev := rec.Value
		fmt.Printf("%-16s %-7d %-7d %3d\n", ev.CommString(), ev.Pid, ev.Ppid, ev.Retval)
	}
}
`
	bpf2goTool = `package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var objs execsnoopObjects
	if err := loadExecsnoopObjects(&objs, nil); err != nil {
		log.Fatal(err)
	}
	defer objs.Close()
	enter, err := link.Tracepoint("syscalls", "sys_enter_execve", objs.EnterExecve, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer enter.Close()
	exit, err := link.Tracepoint("syscalls", "sys_exit_execve", objs.ExitExecve, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer exit.Close()
	rd, err := ringbuf.NewReader(objs.Events)
	if err != nil {
		log.Fatal(err)
	}
	go func() { <-ctx.Done(); rd.Close() }()
	var ev execsnoopEvent
	buf := make([]byte, binary.Size(ev))
	for {
		rec, err := rd.Read()
		if err != nil {
			return
		}
		clear(buf)
		copy(buf, rec.RawSample) // records are sent as long as their arguments
		if err := binary.Read(bytes.NewReader(buf), binary.LittleEndian, &ev); err != nil {
			log.Fatal(err)
		}
		comm := make([]byte, 0, len(ev.Comm))
		for _, c := range ev.Comm {
			if c == 0 {
				break
			}
			comm = append(comm, byte(c))
		}
		fmt.Printf("%-16s %-7d %-7d %3d\n", comm, ev.Pid, ev.Ppid, ev.Retval)
	}
}
`
)

// benchBinary builds the execsnoop tool on each generator's package in
// a module of its own, with the same flags, and reports the binaries' sizes.
func benchBinary(b *testing.B, root string) {
	mod := scratchModule(b, b.TempDir(), root, "example.com/tool")
	data, err := os.ReadFile(filepath.Join(root, "examples", "execsnoop", "execsnoop_bpfel.o"))
	if err != nil {
		b.Fatal(err)
	}
	sDir, gDir := filepath.Join(mod, "tool", "skelgen"), filepath.Join(mod, "tool", "bpf2go")
	input := filepath.Join(sDir, "execsnoop.bpf.o")
	writeFile(b, input, data)
	if err := skelgen(input, "-pkg", "main", "-type", "events=event"); err != nil {
		b.Fatal(err)
	}
	writeFile(b, filepath.Join(sDir, "main.go"), []byte(skelgenTool))
	if err := bpf2goGenerate(gDir, "main", "execsnoop", data); err != nil {
		b.Fatal(err)
	}
	writeFile(b, filepath.Join(gDir, "main.go"), []byte(bpf2goTool))
	out := b.TempDir()
	var size [2]float64
	for b.Loop() {
		for i, dir := range []string{sDir, gDir} {
			exe := filepath.Join(out, filepath.Base(dir))
			if out, err := goBuild(mod, "-trimpath", "-o", exe, "./"+filepath.Join("tool", filepath.Base(dir))); err != nil {
				b.Fatalf("building the %s tool: %v\n%s", filepath.Base(dir), err, out)
			}
			fi, err := os.Stat(exe)
			if err != nil {
				b.Fatal(err)
			}
			size[i] = float64(fi.Size())
		}
	}
	reportPair(b, "bytes", size)
}

// wrote matches a line of GenerateAll's output that says it wrote files.
var wrote = regexp.MustCompile(`(?m): [1-9][0-9]* files written`)

// regenPackages is how many skeleton packages the no-op regeneration
// spans.
const regenPackages = 50

// benchRegen writes a module of 50 skeleton packages, each a copy of an
// example's object with a go:generate skelgen line, generates them once,
// and times skelgen generate ./... when nothing changed.
func benchRegen(b *testing.B, root string, objs []object) {
	var ex []object
	for _, o := range objs {
		if strings.HasPrefix(o.name, "ex.") {
			ex = append(ex, o)
		}
	}
	if len(ex) == 0 {
		b.Skip("no example object")
	}
	sort.Slice(ex, func(i, j int) bool { return ex[i].name < ex[j].name })
	mod := scratchModule(b, b.TempDir(), root, "example.com/regen")
	for i := range regenPackages {
		o := ex[i%len(ex)]
		data, err := os.ReadFile(o.path)
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(mod, fmt.Sprintf("p%02d", i))
		writeFile(b, filepath.Join(dir, o.stem+".bpf.o"), data)
		writeFile(b, filepath.Join(dir, "doc.go"), fmt.Appendf(nil, "// Package p%02d is a skeleton of %s.\npackage p%02d\n\n//go:generate skelgen %s.bpf.o\n", i, o.name, i, o.stem))
	}
	b.Setenv("SKELGEN_CACHE", b.TempDir())
	b.Setenv("GOFLAGS", "-mod=mod")
	generate := func() string {
		var out bytes.Buffer
		if err := gen.GenerateAll(context.Background(), gen.GenerateAllOptions{Patterns: []string{"./..."}, Dir: mod, Out: &out, Cache: gen.OpenCache()}); err != nil {
			b.Fatal(err)
		}
		return out.String()
	}
	generate()
	cpu := -processCPU()
	for b.Loop() {
		if out := generate(); wrote.MatchString(out) {
			b.Fatalf("the second generate wrote files:\n%s", out)
		}
	}
	cpu += processCPU()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/regen")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/regen")
}

// processCPU is the user and system CPU time of the process and of the
// children it waited for (go list) so far.
func processCPU() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	ns := int64(0)
	for _, ru := range []syscall.Rusage{self, children} {
		ns += ru.Utime.Nano() + ru.Stime.Nano()
	}
	return time.Duration(ns)
}
