package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/gen"
	"github.com/skelgen/skelgen/internal/testenv"
)

const cachedLine = "(inputs as the last run read them)"

// TestGenerateCache: a generate whose inputs and outputs are as the last
// run left them compiles nothing and says so, replaying clang's warnings;
// a change to the source, to a header it includes, to the runtime copy's
// go.mod or to an output, a removed output, other arguments, or
// SKELGEN_CACHE=off make it run again, and what it then writes is what a
// run without the cache writes.
func TestGenerateCache(t *testing.T) {
	testenv.Clang(t)
	mod := emptyModule(t, "example.com/cached")
	dir := filepath.Join(mod, "p")
	src := filepath.Join(dir, "p.bpf.c")
	hdr := filepath.Join(dir, "extra.h")
	write(t, src, []byte(`//go:build ignore

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "extra.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("xdp")
int count(struct xdp_md *ctx)
{
	int unused = 3;
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		*v += STEP;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
`))
	write(t, hdr, []byte("#define STEP 1\n"))
	t.Setenv("SKELGEN_CACHE", t.TempDir())
	args := []string{"-pkg", "p", "-cflags", "-O2 -mcpu=v3 -Wall", src}
	obj := filepath.Join(dir, "p_bpfel.o")
	gen := func(step string, wantCached bool) []byte {
		t.Helper()
		code, out, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", step, code, out, stderr)
		}
		if cached := strings.Contains(out, cachedLine); cached != wantCached {
			t.Errorf("%s: cached %v, want %v:\n%s", step, cached, wantCached, out)
		}
		if !strings.Contains(stderr, "unused variable 'unused'") {
			t.Errorf("%s: clang's warning not shown:\n%s", step, stderr)
		}
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := gen("first run", false)
	if again := gen("no change", true); !bytes.Equal(again, first) {
		t.Errorf("no change: the object changed")
	}

	write(t, hdr, []byte("#define STEP 2\n"))
	stepTwo := gen("included header changed", false)
	if bytes.Equal(stepTwo, first) {
		t.Errorf("included header changed: the object is the one compiled with STEP 1")
	}
	gen("no change after the header", true)

	goFile := filepath.Join(dir, "p_bpfel.go")
	good, err := os.ReadFile(goFile)
	if err != nil {
		t.Fatal(err)
	}
	write(t, goFile, append(append([]byte(nil), good...), "// edited\n"...))
	gen("output edited", false)
	if data, _ := os.ReadFile(goFile); !bytes.Equal(data, good) {
		t.Errorf("output edited: not restored")
	}
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if data := gen("output removed", false); !bytes.Equal(data, stepTwo) {
		t.Errorf("output removed: a different object came back")
	}

	src2, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, src, bytes.Replace(src2, []byte("return XDP_PASS;"), []byte("return XDP_DROP;"), 1))
	if data := gen("source changed", false); bytes.Equal(data, stepTwo) {
		t.Errorf("source changed: the object did not")
	}

	args = append([]string{"-target", "bpfel"}, args...)
	gen("other arguments", false)
	gen("other arguments, again", true)

	// The default runtime copy reads go.mod for the module path.
	args = args[2:]
	args = append([]string{"-runtime", "vendor"}, args...)
	gen("runtime copy", false)
	gen("runtime copy, again", true)
	goMod := filepath.Join(mod, "go.mod")
	m, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	write(t, goMod, append(m, "\n// a comment\n"...))
	gen("go.mod changed", false)

	t.Setenv("SKELGEN_CACHE", "off")
	gen("cache off", false)
	gen("cache off, again", false)
}

// BenchmarkGenerateNoop compares a go generate line's run when nothing
// changed, with the cache and without, against one clang compile of the
// same source (the bundled example) for one target.
func BenchmarkGenerateNoop(b *testing.B) {
	testenv.Clang(b)
	root := testenv.ModuleRoot(b)
	text, err := os.ReadFile(filepath.Join(root, "examples/latency/latency.bpf.c"))
	if err != nil {
		b.Fatal(err)
	}
	mod := emptyModule(b, "example.com/noop")
	src := filepath.Join(mod, "latency", "latency.bpf.c")
	write(b, src, text)
	b.Setenv("SKELGEN_CACHE", b.TempDir())
	args := []string{"-pkg", "main", src}
	runOK := func(b *testing.B) {
		if code := run(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("generate: exit %d", code)
		}
	}
	runOK(b)
	b.Run("clang", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := gen.Compile(context.Background(), gen.CompileOptions{Source: src, Target: gen.Target{Clang: "bpfel"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		runOK(b)
		for b.Loop() {
			runOK(b)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.Setenv("SKELGEN_CACHE", "off")
		for b.Loop() {
			runOK(b)
		}
	})
}
