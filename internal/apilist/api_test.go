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
			got, err := List(pkg.dir)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", pkg.name+".api")
			if *update {
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
				t.Errorf("the exported API of %s changed (run go test ./internal/apilist -update to accept):\n%s", pkg.dir, lineDiff(want, got))
			}
		})
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
