package gen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReportsInLineOrder: Check runs the lines' generates at once
// but reports as one after the other would: stale files in the lines'
// order, and on a line it cannot run, what the lines before it found,
// then its error, naming it. (The module does not build: only what the
// generates make is looked at.)
func TestCheckReportsInLineOrder(t *testing.T) {
	t.Parallel()
	mod, input := hostileModule(t)
	obj, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for i := range 4 {
		files[fmt.Sprintf("p%d/gen.go", i)] = []byte(fmt.Sprintf("package p%d\n\n//go:generate go tool skelgen hostile.bpf.o\n", i))
		files[fmt.Sprintf("p%d/hostile.bpf.o", i)] = obj
		if err := os.MkdirAll(filepath.Join(mod, fmt.Sprintf("p%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeModule(t, mod, files)
	check := func() (string, *CheckResult, error) {
		t.Helper()
		var report strings.Builder
		res, err := Check(context.Background(), CheckOptions{Patterns: []string{"./..."}, Dir: mod, Out: &report})
		return report.String(), res, err
	}
	for i := range 4 {
		files, err := Generate(context.Background(), Config{Input: filepath.Join(mod, fmt.Sprintf("p%d", i), "hostile.bpf.o"), Package: fmt.Sprintf("p%d", i), AOT: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
	}
	if report, res, err := check(); err != nil || len(res.Stale) != 0 {
		t.Fatalf("check of fresh files: %v\n%s", err, report)
	}
	for _, p := range []string{"p0", "p2", "p3"} {
		skel := filepath.Join(mod, p, "hostile_bpfel.go")
		data, err := os.ReadFile(skel)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(skel, append(data, "// hand edit\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report, res, err := check()
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, f := range res.Stale {
		stale = append(stale, filepath.Base(filepath.Dir(f)))
	}
	if strings.Join(stale, " ") != "p0 p2 p3" {
		t.Errorf("stale packages %v, want p0 p2 p3 in that order:\n%s", stale, report)
	}
	at := func(s string) int { return strings.Index(report, s) }
	if !(at("p0/hostile_bpfel.go: stale") >= 0 && at("p0/hostile_bpfel.go: stale") < at("p2/hostile_bpfel.go: stale") && at("p2/hostile_bpfel.go: stale") < at("p3/hostile_bpfel.go: stale")) {
		t.Errorf("report not in the lines' order:\n%s", report)
	}

	// p1's line now has a flag skelgen does not know.
	bad := filepath.Join(mod, "p1", "gen.go")
	if err := os.WriteFile(bad, []byte("package p1\n\n//go:generate go tool skelgen -nope hostile.bpf.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	report, _, err = check()
	if err == nil || !strings.Contains(err.Error(), bad+":3") {
		t.Errorf("a line with an unknown flag: err = %v, want one naming %s:3", err, bad)
	}
	if !strings.Contains(report, "p0/hostile_bpfel.go: stale") || strings.Contains(report, "p2/") {
		t.Errorf("report before the bad line, want p0's alone:\n%s", report)
	}
}
