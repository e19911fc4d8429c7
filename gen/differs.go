package gen

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/editdist"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// runtimeDifferences returns, as warnings, the places where a user-space
// program of spec will not behave as the same code in the kernel, where
// the runtime cannot do better:
//   - a store or atomic operation through a value looked up in a map the
//     kernel programs share, which the runtime cannot map into the
//     process (anything but a BPF_F_MMAPABLE array or a data section):
//     the value is a private copy, and the kernel's map is unchanged;
//   - an LRU hash map the user-space programs use: when it is full, the
//     runtime evicts the least recently used entry, the kernel an entry of
//     its approximate, per-CPU lists.
//
// Values are followed from the lookup's r0 through register moves and
// pointer arithmetic in instruction order, not through the stack: a value
// spilled and reloaded is not seen, so a missing warning proves nothing.
func runtimeDifferences(source string, spec *ebpf.CollectionSpec) []string {
	kernelUse := map[string]bool{}
	for _, p := range spec.Programs {
		if !bridge.IsUserProgram(p) {
			for r := range mapRefs(p) {
				kernelUse[r] = true
			}
		}
	}
	var warns []string
	lru := map[string]bool{}
	for _, name := range sortedNames(spec.Programs) {
		p := spec.Programs[name]
		if !bridge.IsUserProgram(p) {
			continue
		}
		for r := range mapRefs(p) {
			if ms := spec.Maps[r]; ms != nil && (ms.Type == ebpf.LRUHash || ms.Type == ebpf.LRUCPUHash) {
				lru[r] = true
			}
		}
		copied := func(m string) bool {
			ms := spec.Maps[m]
			if ms == nil || !kernelUse[m] {
				return false
			}
			// cilium/ebpf creates data sections BPF_F_MMAPABLE.
			return !(ms.Type == ebpf.Array && (ms.Flags&bpfFMmapable != 0 || isDataSection(m)))
		}
		// handle[i] names the map whose handle register i holds, value[i]
		// the map whose looked-up value it points into ("": none).
		var handle, value [11]string
		seen := map[string]bool{}
		for _, ins := range p.Instructions {
			if ins.Symbol() != "" {
				handle, value = [11]string{}, [11]string{}
			}
			op := ins.OpCode
			switch {
			case ins.IsLoadFromMap() && ins.Src == asm.PseudoMapFD:
				handle[ins.Dst], value[ins.Dst] = ins.Reference(), ""
			case ins.IsBuiltinCall():
				m := handle[asm.R1]
				for r := asm.R0; r <= asm.R5; r++ {
					handle[r], value[r] = "", ""
				}
				if asm.BuiltinFunc(ins.Constant) == asm.FnMapLookupElem && copied(m) {
					value[asm.R0] = m
				}
			case op.Class() == asm.StXClass || op.Class() == asm.StClass:
				if m := value[ins.Dst]; m != "" && !seen[m] {
					seen[m] = true
					what := "a store"
					if op.Mode() == asm.AtomicMode {
						what = "an atomic operation"
					}
					warns = append(warns, fmt.Sprintf("%s: user program %s: %s to a value of map %s (%v, shared with kernel programs) writes a private copy, and the kernel's map is unchanged: update it with bpf_map_update_elem, or make it a BPF_F_MMAPABLE array, which the runtime shares live", insnPlace(source, ins), name, what, m, spec.Maps[m].Type))
				}
				if op.Mode() == asm.AtomicMode {
					// A fetch or an exchange writes the source register
					// (a compare-exchange r0).
					handle[ins.Src], value[ins.Src] = "", ""
					handle[asm.R0], value[asm.R0] = "", ""
				}
			case op.Class() == asm.ALU64Class && op.ALUOp() == asm.Mov && op.Source() == asm.RegSource:
				handle[ins.Dst], value[ins.Dst] = handle[ins.Src], value[ins.Src]
			case op.Class() == asm.ALU64Class && (op.ALUOp() == asm.Add || op.ALUOp() == asm.Sub) && ins.Dst != ins.Src:
				// Pointer arithmetic: the pointer stays in the value.
				handle[ins.Dst] = ""
			case op.Class().IsALU() || op.Class().IsLoad():
				handle[ins.Dst], value[ins.Dst] = "", ""
			}
		}
	}
	names := make([]string, 0, len(lru))
	for m := range lru {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		warns = append(warns, fmt.Sprintf("%s: map %s (%v) used by user-space programs: when it is full, the runtime evicts its least recently used entry; the kernel evicts from approximate per-CPU lists, so which entries survive differs", source, m, spec.Maps[m].Type))
	}
	return warns
}

// hookNearMisses checks the sections of spec's user programs for hook
// names misspelled: ubpf/<word>/<arg> whose word is no hook is an error,
// and ubpf/<name> one edit away from a hook (ubpf/begn) a warning,
// each naming the nearest hook. Such a program is one Go runs itself, and
// a tool would otherwise run without it, silently.
func hookNearMisses(spec *ebpf.CollectionSpec) (warns []string, err error) {
	for _, name := range sortedNames(spec.Programs) {
		p := spec.Programs[name]
		rest, ok := strings.CutPrefix(p.SectionName, "ubpf/")
		if !ok || !bridge.IsUserProgram(p) {
			continue
		}
		point, _, hasArg := strings.Cut(rest, "/")
		if slices.Contains(bridge.HookPoints, point) {
			continue
		}
		// The nearest hook: one edit away (a letter left out, added,
		// changed, or two swapped), or two for a suggestion in an error.
		near, dist := "", 3
		for _, h := range bridge.HookPoints {
			if d := editdist.Distance(point, h); d < dist {
				near, dist = h, d
			}
		}
		if dist > 2 || !hasArg && dist > 1 {
			near = ""
		}
		if hasArg {
			msg := fmt.Sprintf("section %q: no hook %q", p.SectionName, point)
			if near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return nil, fmt.Errorf("%s: the hooks are %s; a program Go runs itself is ubpf/<name>, without '/'", msg, bridge.HookNames)
		}
		if near != "" {
			warns = append(warns, fmt.Sprintf("section %q: program %q is one Go runs itself, not a hook; did you mean ubpf/%s? (hooks: %s)", p.SectionName, name, near, bridge.HookNames))
		}
	}
	return warns, nil
}

// bpfFMmapable is BPF_F_MMAPABLE.
const bpfFMmapable = 1 << 10

// mapRefs returns the maps p's instructions load.
func mapRefs(p *ebpf.ProgramSpec) map[string]bool {
	refs := map[string]bool{}
	for _, ins := range p.Instructions {
		if r := ins.Reference(); r != "" && ins.IsLoadFromMap() {
			refs[r] = true
		}
	}
	return refs
}

// insnPlace is the source line of ins, file:line, or the source's name
// when the object has no line information there.
func insnPlace(source string, ins asm.Instruction) string {
	if l, ok := ins.Source().(*btf.Line); ok && l != nil {
		return fmt.Sprintf("%s:%d", filepath.Base(l.FileName()), l.LineNumber())
	}
	return source
}
