package gen

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	bpf2go "github.com/cilium/ebpf/cmd/bpf2go/gen"

	"github.com/skelgen/skelgen/internal/testenv"
)

// benchObjects are the objects BenchmarkGenerate runs on, relative to the
// module root: small skeleton test objects, the type generator's test object
// (many types, few maps), testdata/large (about 100 maps, 100 types and
// 32 programs) and testdata/wide (about 100 maps, 150 types with accessor
// methods and 96 programs of eight attach kinds).
var benchObjects = []struct{ name, path string }{
	{"maps", "internal/skeltest/maps/maps_bpfel.o"},
	{"globals", "internal/skeltest/globals/globals_bpfel.o"},
	{"progs", "internal/skeltest/progs/progs_bpfel.o"},
	{"uprobe", "internal/skeltest/uprobe/uprobe_bpfel.o"},
	{"types", "gen/testdata/types/types_bpfel.o"},
	{"large", "gen/testdata/large/large_bpfel.o"},
	{"wide", "gen/testdata/wide/wide_bpfel.o"},
}

// BenchmarkGenerate times generating the skeleton of each benchmark object
// with skelgen and with cilium/ebpf's bpf2go generator, from the object's
// bytes to formatted Go source, in the same run.
func BenchmarkGenerate(b *testing.B) {
	root := testenv.ModuleRoot(b)
	for _, o := range benchObjects {
		name := o.name
		data := readObjectFile(b, filepath.Join(root, o.path))
		b.Run(name+"/skelgen", func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				obj, err := ReadObject(name+".o", data)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Skeleton(obj, SkeletonConfig{Package: "p", Stem: name, ObjectFile: name + ".o", Target: Target{Clang: "bpfel"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/bpf2go", func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				var maps, vars, progs []string
				for n := range spec.Maps {
					maps = append(maps, n)
				}
				for n := range spec.Variables {
					vars = append(vars, n)
				}
				for n := range spec.Programs {
					progs = append(progs, n)
				}
				err = bpf2go.Generate(bpf2go.GenerateArgs{
					Package: "p", Stem: name, Maps: maps, Variables: vars, Programs: progs,
					Types: bpf2go.CollectGlobalTypes(spec), ObjectFile: name + ".o", Output: io.Discard,
				})
				if err != nil {
					// bpf2go refuses some types skelgen handles
					// (pointer members, for one).
					b.Skipf("bpf2go cannot generate %s: %v", name, err)
				}
			}
		})
	}
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per iteration as cpu-ns/op (when the system tells it).
// On a machine shared with other work, wall time per iteration includes
// waiting for a core, CPU time does not.
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		if end, _ := processCPU(); ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func readObjectFile(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// TestLargeObjectCurrent rebuilds testdata/large and testdata/wide with
// their Makefiles and requires the committed objects byte for byte, so that
// the benchmark's objects cannot drift from their sources.
func TestLargeObjectCurrent(t *testing.T) {
	cc := testenv.Clang(t)
	for _, name := range []string{"large", "wide"} {
		out := t.TempDir()
		cmd := exec.Command("make", "-s", "-C", filepath.Join("testdata", name), "OUT="+out, "CLANG="+cc)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", name, err, msg)
		}
		fresh, err := os.ReadFile(filepath.Join(out, name+"_bpfel.o"))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("testdata", name, name+"_bpfel.o"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("a fresh clang build of testdata/%s differs from the committed object (%d vs %d bytes); run make in testdata/%s", name, len(fresh), len(committed), name)
		}
	}
}
