package apilist

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden API lists")

// TestAPI lists the exported API of the packages that ship inside users'
// modules and compares it with testdata/<name>.api, so that every addition
// or removal is a deliberate change of that file (go test -update).
func TestAPI(t *testing.T) {
	for _, pkg := range []struct{ name, dir string }{
		{"runtime", filepath.Join("..", "..", "runtime")},
		{"bridge", filepath.Join("..", "..", "runtime", "bridge")},
	} {
		t.Run(pkg.name, func(t *testing.T) {
			compareGolden(t, pkg.dir, pkg.name+".api", func(name string) bool { return !strings.HasSuffix(name, "_test.go") })
		})
	}
}

// TestSkeletonAPI lists the exported API of each example's generated
// skeleton (the little-endian files: the big-endian ones declare the same)
// and compares it with testdata/skeleton/<example>.api: a change to the
// generator that changes the shape of generated code (a signature, a
// field's type, a name) fails here until accepted with -update.
func TestSkeletonAPI(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*_bpfel.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("no generated skeletons under examples/")
	}
	for _, f := range examples {
		dir := filepath.Dir(f)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			compareGolden(t, dir, filepath.Join("skeleton", name+".api"), func(n string) bool {
				return strings.HasSuffix(n, "_bpfel.go") || strings.HasSuffix(n, "_bpfel_aot.go")
			})
		})
	}
}

// compareGolden compares the API of the files of dir that keep accepts
// with testdata/golden, or rewrites it with -update.
func compareGolden(t *testing.T, dir, golden string, keep func(string) bool) {
	t.Helper()
	got, err := ListFiles(dir, keep)
	if err != nil {
		t.Fatal(err)
	}
	golden = filepath.Join("testdata", golden)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the exported API of %s changed (run go test ./internal/apilist -update to accept):\n%s", dir, lineDiff(want, got))
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got []byte) string {
	count := map[string]int{}
	for _, l := range strings.Split(string(want), "\n") {
		count[l]--
	}
	for _, l := range strings.Split(string(got), "\n") {
		count[l]++
	}
	var out []string
	for l, n := range count {
		switch {
		case n > 0:
			out = append(out, "+ "+l)
		case n < 0:
			out = append(out, "- "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
