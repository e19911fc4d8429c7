package bridge

import (
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// TestHooks: every hook section parses to its point; malformed ones, and
// ones naming a map the object lacks or cannot read records from, fail
// naming the section (and the map).
func TestHooks(t *testing.T) {
	spec := func(sections ...string) *ebpf.CollectionSpec {
		s := userObject(nil)
		s.Maps["events"] = &ebpf.MapSpec{Name: "events", Type: ebpf.RingBuf, MaxEntries: 4096}
		s.Maps["perf"] = &ebpf.MapSpec{Name: "perf", Type: ebpf.PerfEventArray}
		s.Maps["counts"] = &ebpf.MapSpec{Name: "counts", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1}
		for i, sec := range sections {
			name := string(rune('a' + i))
			s.Programs[name] = &ebpf.ProgramSpec{Name: name, SectionName: sec, Instructions: returnOne}
		}
		return s
	}
	hooks, err := Hooks(spec("ubpf/end", "ubpf/record/events", "ubpf/interval/500ms", "ubpf/begin", "ubpf/report", "ubpf/lost/perf", "ubpf/interval/1s", "ubpf/record/perf", "ubpf"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hooks {
		got = append(got, h.Section+"="+h.Program)
	}
	want := "ubpf/begin=d ubpf/end=a ubpf/interval/500ms=c ubpf/interval/1s=g ubpf/record/events=b ubpf/record/perf=h ubpf/lost/perf=f"
	if strings.Join(got, " ") != want {
		t.Errorf("hooks %q, want %q", strings.Join(got, " "), want)
	}
	if hooks[2].Every != 500*time.Millisecond || hooks[3].Every != time.Second || hooks[4].Map != "events" {
		t.Errorf("hooks %+v: wrong interval or map", hooks)
	}
	for _, c := range []struct {
		sections []string
		want     string
	}{
		{[]string{"ubpf/interval/1x"}, `section ubpf/interval/1x: want ubpf/interval/<duration> with a Go duration such as 1s or 500ms, have "1x"`},
		{[]string{"ubpf/interval"}, "section ubpf/interval: want ubpf/interval/<duration>"},
		{[]string{"ubpf/interval/-1s"}, "section ubpf/interval/-1s: the interval must be positive"},
		{[]string{"ubpf/begin/x"}, "section ubpf/begin/x: hook begin takes no argument"},
		{[]string{"ubpf/intervall/1s"}, `section "ubpf/intervall/1s": no hook "intervall": the hooks are begin, end`},
		{[]string{"ubpf/record/"}, "section ubpf/record/: want ubpf/record/<map>"},
		{[]string{"ubpf/record/nosuch"}, "section ubpf/record/nosuch: the object has no map nosuch"},
		{[]string{"ubpf/record/counts"}, "section ubpf/record/counts: map counts is a Hash map, not a ring buffer or perf event array"},
		{[]string{"ubpf/lost/events"}, "section ubpf/lost/events: map events is a RingBuf map; only perf event arrays lose samples at the reader"},
		{[]string{"ubpf/end", "ubpf/end"}, "section ubpf/end: programs a and b both take this hook"},
		{[]string{"ubpf/record/events", "ubpf/record/events"}, "section ubpf/record/events: programs a and b both take this hook"},
	} {
		_, err := Hooks(spec(c.sections...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.sections, err, c.want)
		}
	}
}
