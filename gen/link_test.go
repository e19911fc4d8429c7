package gen

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// TestSeveralInputs: several inputs must all be C sources, and -header
// (made from one source) refuses them with a clear error.
func TestSeveralInputs(t *testing.T) {
	parse := func(args ...string) (Config, error) {
		fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
		f := NewFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.Config(fs.Args())
	}
	cfg, err := parse("a.bpf.c", "b.bpf.c")
	if err != nil || cfg.Input != "a.bpf.c" || len(cfg.MoreInputs) != 1 || cfg.MoreInputs[0] != "b.bpf.c" {
		t.Errorf("two sources: %+v, %v", cfg, err)
	}
	if _, err := parse("a.bpf.c", "b.bpf.o"); err == nil || !strings.Contains(err.Error(), "b.bpf.o: several inputs must all be C sources") {
		t.Errorf("a source and an object: %v", err)
	}
	if _, err := parse(); err == nil || !strings.Contains(err.Error(), "no INPUT") {
		t.Errorf("no input: %v", err)
	}
	dir := t.TempDir()
	a, b := dir+"/a.bpf.c", dir+"/b.bpf.c"
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("//go:build ignore\nint x;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err = parse("-pkg", "p", "-header", "vmlinux.h", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "-header vmlinux.h: the minimal header is made from one source") {
		t.Errorf("-header with two sources: %v", err)
	}
}
