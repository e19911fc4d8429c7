package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

const localTypesSrc = `
struct { int (*type)[27]; int (*max_entries)[4096]; } rb __attribute__((section(".maps"), used));
static void *(*bpf_ringbuf_reserve)(void *, unsigned long long, unsigned long long) = (void *)131;
static void (*bpf_ringbuf_submit)(void *, unsigned long long) = (void *)132;

struct ev { int pid; char comm[8]; };      /* used only inside the function */
typedef struct { int x, y; } point_t;        /* used nowhere */

__attribute__((section("tracepoint/syscalls/sys_enter_getppid"), used))
int handle(void *ctx)
{
	struct ev *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return 0;
	e->pid = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
__attribute__((section("tracepoint/syscalls/sys_enter_getpid"), used))
int local(void *ctx)
{
	struct loc { long v; char tag[4]; } l = { .v = 1 };   /* defined in the function */
	return l.v;
}
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`

// Types used only inside functions are not in the object's BTF: -type and
// the reader's record type find them in the source, and a run without a
// compiler reads them back from the committed types file.
func TestTypesFromSource(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "local.bpf.c")
	if err := os.WriteFile(src, []byte(localTypesSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: src, Package: "local", ImportRuntime: true, Types: []string{"point_t", "loc"}}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := os.ReadFile(src) // the source is unchanged, and no helper file is left
	if err != nil || string(obj) != localTypesSrc {
		t.Fatal("the source changed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".skelgen-*")); len(left) > 0 {
		t.Errorf("files left behind: %v", left)
	}
	var skel string
	var typesFiles int
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, "_bpfel.go"):
			skel = unwrapComments(string(f.Data))
		case strings.HasSuffix(f.Path, "_types.btf"):
			typesFiles++
		case strings.HasSuffix(f.Path, "_bpfel.o"):
			o, err := ReadObject("local", f.Data)
			if err != nil {
				t.Fatal(err)
			}
			if hasType(o.Spec.Types, "struct ev") || hasType(o.Spec.Types, "point_t") || hasType(o.Spec.Types, "loc") {
				t.Error("the kernel object has the source-only types: it was changed")
			}
		}
	}
	if typesFiles != 2 {
		t.Errorf("%d types files, want one per target", typesFiles)
	}
	for _, want := range []string{
		"Rb *bridge.RingBuf[LocalEv]",
		"Record type struct ev, as written at local.bpf.c:12 (bpf_ringbuf_reserve)",
		"type LocalPointT struct",
		"type LocalLoc struct",
		"func (s *LocalEv) CommString() string",
	} {
		if !strings.Contains(skel, want) {
			t.Errorf("skeleton lacks %q", want)
		}
	}

	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	cfg.Committed = true
	again, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range again {
		if f.Path != files[i].Path || !bytes.Equal(f.Data, files[i].Data) {
			t.Errorf("%s differs when generated from the committed files", f.Path)
		}
	}

	cfg.Committed = false
	cfg.Types = []string{"nosuch"}
	if _, err := Generate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "nosuch") || !strings.Contains(err.Error(), "local.bpf.c") {
		t.Errorf("-type of an undeclared type: %v", err)
	}
}

// A record type the source names but never defines leaves the reader
// untyped, with the reason, rather than failing; so does checking without
// a compiler.
func TestUndefinedRecordType(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "undef.bpf.c")
	code := `
struct { int (*type)[27]; int (*max_entries)[4096]; } rb __attribute__((section(".maps"), used));
static long (*bpf_ringbuf_output)(void *, void *, unsigned long long, unsigned long long) = (void *)130;
__attribute__((section("tracepoint/syscalls/sys_enter_getppid"), used))
int handle(void *ctx)
{
	struct nothere *p = 0;
	bpf_ringbuf_output(&rb, p, 8, 0);
	return 0;
}
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: src, Package: "undef", ImportRuntime: true}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var skel string
	for _, f := range files {
		if strings.HasSuffix(f.Path, "_types.btf") {
			t.Errorf("a types file without types: %s", f.Path)
		}
		if strings.HasSuffix(f.Path, "_bpfel.go") {
			skel = unwrapComments(string(f.Data))
		}
	}
	if !strings.Contains(skel, "Rb *ebpf.Map") || !strings.Contains(skel, "struct nothere, as written at undef.bpf.c:8 (bpf_ringbuf_output), but skelgen found no struct definition") {
		t.Errorf("the reader of an undefined record type:\n%s", skel)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	cfg.Committed = true
	if _, err := Generate(context.Background(), cfg); err != nil {
		t.Errorf("without a compiler: %v", err)
	}
}

// unwrapComments joins wrapped comment lines, so that tests can look for
// a sentence whatever the line breaks.
func unwrapComments(src string) string {
	return strings.NewReplacer("\n\t// ", " ", "\n// ", " ").Replace(src)
}

// TestTypeKindsInOneBatch: -type names a union, an enum, a typedef and a
// struct together, by their bare names, none of them in the object's BTF.
// A union or enum tag makes the batch's struct declarations fail to
// compile ("struct addr" after "union addr"); every name is still found,
// with its own kind.
func TestTypeKindsInOneBatch(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "kinds.bpf.c")
	code := `
union addr { unsigned int v4; unsigned char v6[16]; };
struct conn { union addr src; unsigned short port; };
enum state { ST_OPEN = 1, ST_CLOSED = 2 };
typedef struct { int x, y; } point_t;

__attribute__((section("tracepoint/syscalls/sys_enter_getpid"), used))
int handle(void *ctx)
{
	struct conn c = {};
	return c.port;
}
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, types := range [][]string{
		{"addr", "conn"},
		{"conn", "addr"},
		{"state", "conn", "point_t", "addr"},
	} {
		cfg := Config{Input: src, Package: "kinds", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}}, Types: types}
		files, err := Generate(context.Background(), cfg)
		if err != nil {
			t.Errorf("-type %s: %v", strings.Join(types, " -type "), err)
			continue
		}
		var skel string
		for _, f := range files {
			if strings.HasSuffix(f.Path, "_bpfel.go") {
				skel = string(f.Data)
			}
		}
		want := map[string]string{
			"addr":    "// KindsAddr is union addr (16 bytes)",
			"conn":    "// KindsConn is struct conn (20 bytes)",
			"state":   "// KindsState is enum state (4 bytes)",
			"point_t": "type KindsPointT struct",
		}
		for _, n := range types {
			if !strings.Contains(skel, want[n]) {
				t.Errorf("-type %s: the skeleton lacks %q", strings.Join(types, " -type "), want[n])
			}
		}
	}
}
