package gen

import (
	"strings"
	"testing"
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
