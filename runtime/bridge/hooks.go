package bridge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// HookKind is the point of a tool's life at which a hook runs.
type HookKind int

// The hooks, by section.
const (
	// NoHook: a user program that only Go code runs (SEC("ubpf/report")).
	NoHook HookKind = iota
	// HookBegin: SEC("ubpf/begin"), once after attach, before any record.
	HookBegin
	// HookEnd: SEC("ubpf/end"), once on stop, after the readers drained.
	HookEnd
	// HookInterval: SEC("ubpf/interval/<duration>"), on a ticker.
	HookInterval
	// HookRecord: SEC("ubpf/record/<map>"), on every record of a ring
	// buffer or perf event array.
	HookRecord
	// HookLost: SEC("ubpf/lost/<map>"), on every notice of samples the
	// kernel lost on a perf event array.
	HookLost
)

// Hook is a user program that runs at a point of a tool's life.
type Hook struct {
	Kind HookKind
	// Program is the program's name, Section its section.
	Program, Section string
	// Every is the period of an interval hook.
	Every time.Duration
	// Map is the stream of a record or lost hook.
	Map string
}

const hookPrefix = "ubpf/"

// ParseHook returns the hook a ubpf/ section names: NoHook for sections
// that name no hook point (ubpf/<name>), an error for a malformed hook
// section (a bad duration, a missing map name, an argument to begin or
// end, an argument after a word that is no hook: ubpf/intervall/1s).
func ParseHook(section string) (Hook, error) {
	h := Hook{Section: section}
	rest, ok := strings.CutPrefix(section, hookPrefix)
	if !ok {
		return h, nil
	}
	point, arg, hasArg := strings.Cut(rest, "/")
	switch point {
	case "begin", "end":
		if hasArg {
			return h, fmt.Errorf("section %s: hook %s takes no argument", section, point)
		}
		h.Kind = HookBegin
		if point == "end" {
			h.Kind = HookEnd
		}
	case "interval":
		d, err := time.ParseDuration(arg)
		if err != nil || !hasArg {
			return h, fmt.Errorf("section %s: want ubpf/interval/<duration> with a Go duration such as 1s or 500ms, have %q", section, arg)
		}
		if d <= 0 {
			return h, fmt.Errorf("section %s: the interval must be positive", section)
		}
		h.Kind, h.Every = HookInterval, d
	case "record", "lost":
		if arg == "" || strings.Contains(arg, "/") {
			return h, fmt.Errorf("section %s: want ubpf/%s/<map>, naming one ring buffer or perf event array", section, point)
		}
		h.Kind, h.Map = HookRecord, arg
		if point == "lost" {
			h.Kind = HookLost
		}
	default:
		if hasArg {
			return h, fmt.Errorf("section %q: no hook %q: the hooks are %s; a program Go runs itself is ubpf/<name>, without '/'", section, point, HookNames)
		}
	}
	return h, nil
}

// HookNames lists the hook sections after ubpf/, for messages.
const HookNames = "begin, end, interval/<duration>, record/<map> and lost/<map>"

// HookPoints are the words that start a hook section after ubpf/.
var HookPoints = []string{"begin", "end", "interval", "record", "lost"}

// Hooks returns the hooks of spec's user programs, ordered by kind, then
// interval, map and program name. It fails naming the section when one is
// malformed, names a map the object lacks or one that is no stream (lost
// hooks: no perf event array), or when two programs take one point (two
// begin or end hooks, two record or lost hooks of one map).
func Hooks(spec *ebpf.CollectionSpec) ([]Hook, error) {
	var hooks []Hook
	taken := map[string]string{}
	for name, p := range spec.Programs {
		if !IsUserProgram(p) {
			continue
		}
		h, err := ParseHook(p.SectionName)
		if err != nil {
			return nil, err
		}
		if h.Kind == NoHook {
			continue
		}
		h.Program = name
		if h.Map != "" {
			m := spec.Maps[h.Map]
			switch {
			case m == nil:
				return nil, fmt.Errorf("section %s: the object has no map %s", h.Section, h.Map)
			case h.Kind == HookRecord && m.Type != ebpf.RingBuf && m.Type != ebpf.PerfEventArray:
				return nil, fmt.Errorf("section %s: map %s is a %v map, not a ring buffer or perf event array", h.Section, h.Map, m.Type)
			case h.Kind == HookLost && m.Type != ebpf.PerfEventArray:
				return nil, fmt.Errorf("section %s: map %s is a %v map; only perf event arrays lose samples at the reader", h.Section, h.Map, m.Type)
			}
		}
		if h.Kind != HookInterval {
			point := fmt.Sprint(h.Kind, h.Map)
			if other, ok := taken[point]; ok {
				a, b := min(other, name), max(other, name)
				return nil, fmt.Errorf("section %s: programs %s and %s both take this hook; one object has one of each", h.Section, a, b)
			}
			taken[point] = name
		}
		hooks = append(hooks, h)
	}
	sort.Slice(hooks, func(i, j int) bool {
		a, b := hooks[i], hooks[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Every != b.Every {
			return a.Every < b.Every
		}
		if a.Map != b.Map {
			return a.Map < b.Map
		}
		return a.Program < b.Program
	})
	return hooks, nil
}

// contextSize is the size of the struct a program's first argument points
// to, 0 when it takes none: a record hook's record is zero-filled to it.
func contextSize(p *ebpf.ProgramSpec) int {
	if len(p.Instructions) == 0 {
		return 0
	}
	fn := btf.FuncMetadata(&p.Instructions[0])
	if fn == nil {
		return 0
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok || len(proto.Params) == 0 {
		return 0
	}
	ptr, ok := btf.UnderlyingType(proto.Params[0].Type).(*btf.Pointer)
	if !ok {
		return 0
	}
	n, err := btf.Sizeof(ptr.Target)
	if err != nil {
		return 0
	}
	return n
}
