package gen

import (
	"bytes"
	"encoding/binary"
	"go/format"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestVerbatimSameOutput generates the skeleton of every object in the
// repository with the regular parts written verbatim and with the whole
// file formatted by go/format, with and without -aot, with -btf-for, and requires the same
// bytes, and output that go/format leaves unchanged.
func TestVerbatimSameOutput(t *testing.T) {
	root := testenv.ModuleRoot(t)
	var objs []string
	for _, pattern := range []string{"internal/skeltest/*/*.o", "examples/*/*.o", "testdata/corpus/*.o", "gen/testdata/*/*.o"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m...)
	}
	if len(objs) < 20 {
		t.Fatalf("found only %d objects", len(objs))
	}
	compared := 0
	for _, path := range objs {
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(path)
		obj, err := ReadObject(base, data)
		if err != nil {
			t.Logf("%s: not generated: %v", rel, err)
			continue
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".o"), ".bpf"), "_bpfel")
		stem = strings.TrimSuffix(stem, "_bpfeb")
		target := Target{Clang: "bpfel"}
		if strings.HasSuffix(base, "_bpfeb.o") {
			target = Target{Clang: "bpfeb"}
		}
		for i, aot := range []bool{false, true, true} {
			cfg := SkeletonConfig{Package: "p", Stem: stem, ObjectFile: base, Source: stem + ".bpf.c", Target: target, AOT: aot}
			if i == 2 {
				// -btf-for
				cfg.KernelBTFFile, cfg.Kernels = stem+"_"+target.Suffix()+"_btf.tar.gz", []string{"6.1.0-57-cloud-amd64", "6.12.117+deb12-cloud-amd64"}
			}
			fast, fastAOT, err := writeSkeleton(obj, cfg, true)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			slow, slowAOT, err := writeSkeleton(obj, cfg, false)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			if !bytes.Equal(fast, slow) {
				t.Errorf("%s (aot %v): verbatim output differs from go/format's:\n%s", rel, aot, firstDiff(slow, fast))
			}
			if !bytes.Equal(fastAOT, slowAOT) {
				t.Errorf("%s (aot %v): translation differs", rel, aot)
			}
			if again, err := format.Source(fast); err != nil || !bytes.Equal(again, fast) {
				t.Errorf("%s (aot %v): output is not gofmt'd (%v):\n%s", rel, aot, err, firstDiff(fast, again))
			}
			compared++
		}
	}
	t.Logf("%d skeletons compared", compared)
}

// TestVerbatimSplice checks that splice refuses output whose placeholders
// are missing or out of order rather than writing a wrong file.
func TestVerbatimSplice(t *testing.T) {
	v := newVerbatim(0)
	w := v.part()
	w.s("\tA int\n")
	v.placeholder(w)
	v.codes = nil
	src := []byte("package p\n\ntype T struct {\n\tB int\n}\n\n// " + v.marker + "trailer\n")
	if _, err := v.splice(src, nil, nil); err == nil {
		t.Error("splice accepted source without the placeholder")
	}
	ok := []byte("package p\n\ntype T struct {\n\t// " + v.marker + "0\n}\n\n// " + v.marker + "trailer\n")
	got, err := v.splice(ok, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "package p\n\ntype T struct {\n\tA int\n}\n"; string(got) != want {
		t.Errorf("splice gave %q, want %q", got, want)
	}
	twice := []byte("package p\n\ntype T struct {\n\t// " + v.marker + "0\n\t// " + v.marker + "0\n}\n\n// " + v.marker + "trailer\n")
	if _, err := v.splice(twice, nil, nil); err == nil {
		t.Error("splice accepted a placeholder twice")
	}
	if _, err := v.splice(ok[:bytes.Index(ok, []byte("\n\n// "))+1], nil, nil); err == nil {
		t.Error("splice accepted source without the trailer")
	}
}

// TestVerbatimInterleaved checks that parts written in turns keep their
// own text.
func TestVerbatimInterleaved(t *testing.T) {
	v := newVerbatim(0)
	a, b := v.part(), v.part()
	a.s("\tA int\n")
	b.s("\tB int\n")
	a.s("\tC int\n")
	b.s("\tD int\n")
	v.placeholder(a)
	v.placeholder(b)
	src := []byte("package p\n\ntype T struct {\n\t// " + v.marker + "1\n}\n\ntype U struct {\n\t// " + v.marker + "0\n}\n\n// " + v.marker + "trailer\n")
	got, err := v.splice(src, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "package p\n\ntype T struct {\n\tB int\n\tD int\n}\n\ntype U struct {\n\tA int\n\tC int\n}\n"; string(got) != want {
		t.Errorf("splice gave %q, want %q", got, want)
	}
}

// TestVerbatimStructComments compares the verbatim and the go/format
// declarations of a struct whose commented fields have types of different
// widths, in runs broken by uncommented fields.
func TestVerbatimStructComments(t *testing.T) {
	u32 := &btf.Int{Name: "u32", Size: 4}
	ptr := &btf.Pointer{Target: &btf.Void{}}
	pt := &btf.Struct{Name: "pt", Size: 8, Members: []btf.Member{{Name: "x", Type: u32}, {Name: "y", Type: u32, Offset: 32}}}
	s := &btf.Struct{Name: "s", Size: 40, Members: []btf.Member{
		{Name: "a", Type: u32},
		{Name: "p", Type: ptr, Offset: 64},
		{Name: "id", Type: &btf.Typedef{Name: "id_t", Type: u32}, Offset: 128},
		{Name: "where", Type: &btf.Typedef{Name: "pt_t", Type: pt}, Offset: 160},
		{Name: "b", Type: u32, Offset: 224},
		{Name: "long_name", Type: ptr, Offset: 256},
	}}
	render := func(fast bool) []byte {
		g := NewTypeGen(binary.LittleEndian)
		g.Prefix = "P"
		var v *verbatim
		if fast {
			v = newVerbatim(0)
			g.verb = v
		}
		if _, err := g.GoType(s); err != nil {
			t.Fatal(err)
		}
		decls, err := g.Decls()
		if err != nil {
			t.Fatal(err)
		}
		f := jen.NewFile("p")
		for _, d := range decls {
			f.Add(d)
		}
		if fast {
			v.trailer(f)
		}
		out, err := v.render(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fast && !bytes.Contains(v.text, []byte("Where    PPt    // pt_t")) {
			t.Error("the struct was not written verbatim")
		}
		return out
	}
	fast, slow := render(true), render(false)
	if !bytes.Equal(fast, slow) {
		t.Errorf("verbatim output differs from go/format's:\n%s", firstDiff(slow, fast))
	}
	if !bytes.Contains(fast, []byte("\tWhere    PPt    // pt_t\n")) {
		t.Errorf("no aligned comment in:\n%s", fast)
	}
}

// TestTagText: the tag of any C name, hostile bytes included, is a Go
// string literal whose skelgen key gives the name back.
func TestTagText(t *testing.T) {
	for _, name := range []string{"events", "__x", ".rodata", "a`b", "q\"uote", "new\nline", "\xff\xfe", "tab\there"} {
		lit := tagText(name)
		tag, err := strconv.Unquote(lit)
		if err != nil {
			t.Errorf("%q: tag %s is no Go string literal: %v", name, lit, err)
			continue
		}
		if got, ok := reflect.StructTag(tag).Lookup("skelgen"); !ok || got != name {
			t.Errorf("%q: tag %s gives %q, %v", name, lit, got, ok)
		}
	}
}
