package gen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestHookSectionErrors: go generate fails on a hook section with a bad
// duration or a map the object lacks, naming the section (and the map).
func TestHookSectionErrors(t *testing.T) {
	testenv.Clang(t)
	for _, c := range []struct{ section, want string }{
		{"ubpf/interval/1x", `section ubpf/interval/1x: want ubpf/interval/<duration>`},
		{"ubpf/record/nosuch", "section ubpf/record/nosuch: the object has no map nosuch"},
		{"ubpf/record/counts", "section ubpf/record/counts: map counts is a Array map, not a ring buffer or perf event array"},
	} {
		dir := t.TempDir()
		src := filepath.Join(dir, "bad.bpf.c")
		text := `#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, __u64); } counts SEC(".maps");
SEC("` + c.section + `") int hook(void *ctx) { __u32 k = 0; return bpf_map_lookup_elem(&counts, &k) != 0; }
char LICENSE[] SEC("license") = "GPL";
`
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Generate(context.Background(), Config{Input: src, Package: "bad", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.section, err, c.want)
		}
	}
}

// TestServeGenerated: a skeleton with streams gets a handler per typed
// stream, named after its map, and a Serve that leaves the programs to
// the tool (bridge.NewTool registers those Bind bound); a program named
// serve leaves the method its name.
func TestServeGenerated(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "tool.bpf.c")
	text := `#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct event { __u32 pid; };
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 4096); } lost SEC(".maps");
SEC("tracepoint/syscalls/sys_enter_getppid") int serve(void *ctx) {
	struct event *e = bpf_ringbuf_reserve(&lost, sizeof(*e), 0);
	if (!e) return 0;
	e->pid = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
`
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), Config{Input: src, Package: "tool", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}}})
	if err != nil {
		t.Fatal(err)
	}
	skel, _ := generatedSkeleton(t, files)
	for _, want := range []string{
		"type ToolHandlers struct {",
		"OnLostRecords func(*ToolEvent)", // OnLost is the handlers' own
		"func (o *ToolObjects) Serve(ctx context.Context, h *ToolHandlers) error {",
		"C_serve *bridge.Tracepoint `skelgen:\"serve\"`", // Serve is the method
		"bridge.Handle(t, o.Lost, h.OnLostRecords)",
	} {
		if !strings.Contains(skel, want) {
			t.Errorf("skeleton lacks %q", want)
		}
	}
	if strings.Contains(skel, "t.Program(") {
		t.Error("Serve registers programs itself: the tool registers those Bind bound")
	}
}
