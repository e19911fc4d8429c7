package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/skelgen/skelgen/internal/testenv"
)

func TestRecordsFromSource(t *testing.T) {
	src := `
struct event { int pid; };
struct other { int x; };
/* bpf_ringbuf_reserve(&rb, sizeof(struct other), 0) in a comment */
int a(void *ctx) {
	struct event *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	return 0;
}
int b(void *ctx) {
	struct event e = {};
	bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}
int d(void *ctx) {
	struct local {
		int a;
	} l = {};
	bpf_perf_event_output(ctx, &local_perf, 0, &l, sizeof(l));
	return 0;
}
int c(void *ctx) {
	struct event *e = bpf_ringbuf_reserve(&rb, sizeof(struct event), 0);
	struct other o;
	bpf_ringbuf_output(&mixed, &o, sizeof(o), 0);
	bpf_ringbuf_output(&mixed, e, sizeof(*e), 0);
	return 0;
}
`
	got := recordsFromSource("x.bpf.c", []byte(src))
	for m, want := range map[string]string{"rb": "struct event", "perf": "struct event", "mixed": "", "local_perf": "struct local"} {
		g, ok := got[m]
		if !ok {
			t.Errorf("map %s: no guess", m)
			continue
		}
		if g.Type != want {
			t.Errorf("map %s: type %q (%s), want %q", m, g.Type, g.Why, want)
		}
		if !strings.Contains(g.Why, "x.bpf.c:") && want != "" {
			t.Errorf("map %s: reason %q names no line", m, g.Why)
		}
	}
	if g := got["rb"]; !strings.Contains(g.Why, "x.bpf.c:6") || strings.Contains(g.Why, ":4") {
		t.Errorf("rb: %q: want line 6 and not the comment", g.Why)
	}
}

const twoEventsSrc = `
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned char u8;
struct { int (*type)[27]; int (*max_entries)[4096]; } rb1 __attribute__((section(".maps"), used));
struct { int (*type)[27]; int (*max_entries)[4096]; } rb2 __attribute__((section(".maps"), used));
struct { int (*type)[27]; int (*max_entries)[4096]; } rb3 __attribute__((section(".maps"), used));
static void *(*bpf_ringbuf_reserve)(void *, unsigned long long, unsigned long long) = (void *)131;
static void (*bpf_ringbuf_submit)(void *, unsigned long long) = (void *)132;

struct other { u64 x, y; };
struct event { u8 file_scope; };

__attribute__((section("tracepoint/syscalls/sys_enter_getppid"), used))
int one(void *ctx)
{
	struct event { u32 a; };
	struct event *e = bpf_ringbuf_reserve(&rb1, sizeof(struct event), 0);
	if (!e)
		return 0;
	e->a = 0x01020304;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
__attribute__((section("tracepoint/syscalls/sys_enter_getpid"), used))
int two(void *ctx)
{
	struct event { u64 b; u8 c; };
	struct event *e = bpf_ringbuf_reserve(&rb2, sizeof(*e), 0);
	if (!e)
		return 0;
	e->b = 0x1122334455667788ULL;
	e->c = 9;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
__attribute__((section("tracepoint/syscalls/sys_enter_gettid"), used))
int three(void *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&rb3, sizeof(struct event), 0);   /* the file's */
	if (!e)
		return 0;
	e->file_scope = 7;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`

// Two functions define struct event each, and a third uses the file's:
// each reader gets the struct its own function reserves, under Go names
// that tell them apart; -type cannot name one of them by its tag, and a
// -type that contradicts the source is an error unless marked with !.
func TestRecordsOfSameNamedStructs(t *testing.T) {
	t.Parallel()
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "two.bpf.c")
	if err := os.WriteFile(src, []byte(twoEventsSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: src, Package: "two", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}}}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	skel, obj := generatedSkeleton(t, files)
	for _, want := range []string{
		"Rb1 *bridge.RingBuf[TwoOneEvent]",
		"Rb2 *bridge.RingBuf[TwoTwoEvent]",
		"Rb3 *bridge.RingBuf[TwoEvent]",
		"TwoOneEvent is struct event (4 bytes) with its C layout. It is the struct event defined in function one.",
		"TwoTwoEvent is struct event (16 bytes) with its C layout. It is the struct event defined in function two.",
		"TwoEvent is struct event (1 bytes) with its C layout.\n",
		"Record type struct event (defined in function two), as written at two.bpf.c:29 (bpf_ringbuf_reserve)",
		"Record type struct event, as written at two.bpf.c:40 (bpf_ringbuf_reserve)",
	} {
		if !strings.Contains(skel, want) {
			t.Errorf("skeleton lacks %q", want)
		}
	}
	sizes := map[string]int{}
	for _, m := range regexp.MustCompile(`unsafe\.Sizeof\((\w+)\{\}\)-(\d+)\]`).FindAllStringSubmatch(skel, -1) {
		sizes[m[1]], _ = strconv.Atoi(m[2])
	}
	wantSizes := map[string]int{"TwoOneEvent": 4, "TwoTwoEvent": 16, "TwoEvent": 1}
	for typ, n := range wantSizes {
		if sizes[typ] != n {
			t.Errorf("%s: size check %d, want %d", typ, sizes[typ], n)
		}
	}

	// Without a compiler, from the committed types file: the same.
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	committed := cfg
	committed.Committed = true
	again, err := Generate(context.Background(), committed)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range again {
		if f.Path != files[i].Path || !bytes.Equal(f.Data, files[i].Data) {
			t.Errorf("%s differs when generated from the committed files", f.Path)
		}
	}

	for _, tc := range []struct {
		types []string
		err   []string // parts of the error; none: no error
		skel  string
	}{
		// event at file scope is the file's struct event.
		{types: []string{"rb2=event"}, err: []string{"struct event (defined in function two) (16 bytes)", "not struct event (1 bytes)"}},
		{types: []string{"rb1=other"}, err: []string{"-type rb1=other", "struct event (defined in function one) (4 bytes)", "two.bpf.c:18 (bpf_ringbuf_reserve)", "struct other (16 bytes)", "rb1=other!"}},
		{types: []string{"rb3=other"}, err: []string{"struct event (1 bytes)", "struct other (16 bytes)"}},
		{types: []string{"rb1=other!"}, skel: "Records typed by -type rb1=other!, though the source writes struct event (defined in function one) (4 bytes).\n\tRb1 *bridge.RingBuf[TwoOther]"},
		{types: []string{"other!"}, err: []string{"! follows MAP=T only"}},
	} {
		c := cfg
		c.Types = tc.types
		files, err := Generate(context.Background(), c)
		if len(tc.err) == 0 {
			if err != nil {
				t.Errorf("-type %v: %v", tc.types, err)
				continue
			}
			if skel, _ := generatedSkeleton(t, files); !strings.Contains(skel, tc.skel) {
				t.Errorf("-type %v: skeleton lacks %q", tc.types, tc.skel)
			}
			continue
		}
		if err == nil {
			t.Errorf("-type %v: no error", tc.types)
			continue
		}
		for _, part := range tc.err {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("-type %v: error %q lacks %q", tc.types, err, part)
			}
		}
	}

	// Without the file's struct event, -type cannot name one by its tag.
	noFile := strings.Replace(twoEventsSrc, "struct event { u8 file_scope; };", "", 1)
	noFile = noFile[:strings.Index(noFile, "__attribute__((section(\"tracepoint/syscalls/sys_enter_gettid\")")]
	if err := os.WriteFile(src, []byte(noFile), 0o644); err != nil {
		t.Fatal(err)
	}
	c := cfg
	c.Types = []string{"rb2=event"}
	_, err = Generate(context.Background(), c)
	for _, part := range []string{"-type event: struct event has 2 definitions in two.bpf.c", "function one (two.bpf.c:17)", "function two (two.bpf.c:28)", "cannot tell"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("-type rb2=event of two definitions: error %v lacks %q", err, part)
		}
	}

	// A call in a macro: which definition its expansions see is not known.
	macro := strings.Replace(twoEventsSrc, "int one(void *ctx)\n{", "#define RESERVE1 bpf_ringbuf_reserve(&rb1, sizeof(struct event), 0)\nint one(void *ctx)\n{", 1)
	macro = strings.Replace(macro, "e = bpf_ringbuf_reserve(&rb1, sizeof(struct event), 0)", "e = RESERVE1", 1)
	if err := os.WriteFile(src, []byte(macro), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "in a macro") || !strings.Contains(err.Error(), "-type rb1=T") {
		t.Errorf("a reserve in a macro, of a struct defined three times: %v", err)
	}

	// The records the kernel writes have the sizes of the readers' types.
	testenv.Kernel(t)
	testenv.Tracefs(t)
	readRecords(t, obj, map[string]int{"rb1": 4, "rb2": 16, "rb3": 1}, map[string]string{"one": "sys_enter_getppid", "two": "sys_enter_getpid", "three": "sys_enter_gettid"})
}

// generatedSkeleton returns the bpfel skeleton, comments unwrapped, and
// the object of files.
func generatedSkeleton(t *testing.T, files []File) (string, []byte) {
	t.Helper()
	var skel string
	var obj []byte
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, "_bpfel.go"):
			skel = unwrapComments(string(f.Data))
		case strings.HasSuffix(f.Path, "_bpfel.o"):
			obj = f.Data
		}
	}
	if skel == "" || obj == nil {
		t.Fatal("no bpfel skeleton and object")
	}
	return skel, obj
}

// readRecords loads obj, attaches each program to its syscalls
// tracepoint, makes the syscalls and requires one record of the given
// size from each ring buffer.
func readRecords(t *testing.T, obj []byte, sizes map[string]int, tracepoints map[string]string) {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	for prog, tp := range tracepoints {
		l, err := link.Tracepoint("syscalls", tp, coll.Programs[prog], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	syscall.Getppid()
	syscall.Getpid()
	syscall.Gettid()
	for m, size := range sizes {
		rd, err := ringbuf.NewReader(coll.Maps[m])
		if err != nil {
			t.Fatal(err)
		}
		rd.SetDeadline(time.Now().Add(5 * time.Second))
		rec, err := rd.Read()
		rd.Close()
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		if len(rec.RawSample) != size {
			t.Errorf("%s: a record of %d bytes, the reader's type has %d", m, len(rec.RawSample), size)
		}
	}
}

// Which definition of a tag a point of the source sees, by C's scopes.
func TestVisibleDefinition(t *testing.T) {
	src := `
struct ev { int file; };
#define MAKE(x) { struct ev { char m; } v; }
int BPF_PROG(handler, struct task_struct *p)
{
	struct ev { long a; };
	char *s = "{ struct ev { int str; }";
	AT1;
	{
		struct ev { short inner; };
		AT2;
	}
	AT3;
	return 0;
}
static __attribute__((noinline)) int helper(int x) __attribute__((unused))
{
	struct ev { int h; } init = { .h = 1 };
	AT4;
	return 0;
}
int after(void) { AT5; return 0; }
`
	cs := parseCSource(src)
	for at, want := range map[string]string{"AT1": "handler a", "AT2": "handler inner", "AT3": "handler a", "AT4": "helper h", "AT5": " file"} {
		d := cs.visible("struct", "ev", strings.Index(src, at))
		if d == nil {
			t.Errorf("%s: no definition", at)
			continue
		}
		body := strings.Fields(strings.Trim(src[d.off:d.end+1], "}"))
		if got := d.fn + " " + body[len(body)-1]; got != want+";" {
			t.Errorf("%s: sees %q, want %q", at, got, want+";")
		}
	}
	if n := len(cs.definitions("struct", "ev")); n != 4 {
		t.Errorf("%d definitions, want 4 (none in the macro or the string)", n)
	}
}
