package btfmin

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// Report compares the CO-RE relocations of an original object with those
// of the same source recompiled against a minimal header.
type Report struct {
	Object  string
	Targets []TargetReport
	// IdenticalInstructions reports whether every program section of the
	// new object has the same bytes as the original's (expected in Exact
	// mode only).
	IdenticalInstructions bool
}

// TargetReport is the comparison against one kernel BTF.
type TargetReport struct {
	Target      string
	Relocations int // distinct (kind, root, path) keys in the original
	Diffs       []Diff
}

// Diff is one relocation key resolving differently (or existing in only
// one object: the missing side's value is "absent").
type Diff struct {
	Key           string
	Original, New string
}

// OK reports whether no target showed a difference.
func (r *Report) OK() bool {
	for _, t := range r.Targets {
		if len(t.Diffs) > 0 {
			return false
		}
	}
	return true
}

func (r *Report) String() string {
	var b strings.Builder
	for _, t := range r.Targets {
		status := "ok"
		if len(t.Diffs) > 0 {
			status = fmt.Sprintf("%d differences", len(t.Diffs))
		}
		fmt.Fprintf(&b, "%s against %s: %d relocations, %s\n", r.Object, t.Target, t.Relocations, status)
		for _, d := range t.Diffs {
			fmt.Fprintf(&b, "  %q: original %s, new %s\n", d.Key, d.Original, d.New)
		}
	}
	ins := "differ (expected in compact mode)"
	if r.IdenticalInstructions {
		ins = "identical"
	}
	fmt.Fprintf(&b, "%s: program instructions %s\n", r.Object, ins)
	return b.String()
}

// Verify recompiles cfg.Source against header and compares every CO-RE
// relocation of the new object with cfg.Objects[0]'s, resolved against
// each of cfg.KernelBTF by cilium/ebpf's CO-RE engine.
func Verify(cfg Config, header []byte) (*Report, error) {
	if cfg.Source == "" || len(cfg.Objects) != 1 {
		return nil, fmt.Errorf("verify needs one object and its source")
	}
	if len(cfg.KernelBTF) == 0 {
		return nil, fmt.Errorf("verify needs at least one kernel BTF target")
	}
	dir, err := os.MkdirTemp("", "skelgen-btfmin-verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	newObj := filepath.Join(dir, "new.o")
	clang, err := cfg.clang()
	if err != nil {
		return nil, err
	}
	diags, ok, err := compileSource(clang, cfg.Source, cfg.CFlags, dir, cfg.output(), header, newObj)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s%s does not compile with the new header", clangSays(clang, diags), filepath.Base(cfg.Source))
	}
	report := &Report{Object: filepath.Base(cfg.Objects[0])}
	if report.IdenticalInstructions, err = sameInstructions(cfg.Objects[0], newObj); err != nil {
		return nil, err
	}
	kernels, err := cfg.loadKernels()
	if err != nil {
		return nil, err
	}
	for i, target := range kernels {
		orig, err := resolvedRelocations(cfg.Objects[0], target)
		if err != nil {
			return nil, err
		}
		got, err := resolvedRelocations(newObj, target)
		if err != nil {
			return nil, fmt.Errorf("recompiled %s: %w", filepath.Base(cfg.Source), err)
		}
		tr := TargetReport{Target: filepath.Base(cfg.KernelBTF[i]), Relocations: len(orig)}
		keys := make([]string, 0, len(orig)+len(got))
		for k := range orig {
			keys = append(keys, k)
		}
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			a, b := valueSet(orig, k), valueSet(got, k)
			if a != b {
				tr.Diffs = append(tr.Diffs, Diff{Key: k, Original: a, New: b})
			}
		}
		report.Targets = append(report.Targets, tr)
	}
	return report, nil
}

func valueSet(m map[string]map[string]bool, k string) string {
	vs, ok := m[k]
	if !ok {
		return "absent"
	}
	var l []string
	for v := range vs {
		l = append(l, v)
	}
	slices.Sort(l)
	return strings.Join(l, "|")
}

// reCORERelocation parses CORERelocation.String(), the only way to reach
// a relocation's kind, local type and accessor from outside cilium/ebpf.
var reCORERelocation = regexp.MustCompile(`^CORERelocation\((\w+), .*\[([0-9:]*)\], local_id=(\d+)\)$`)

// resolvedRelocations resolves every CO-RE relocation of every program in
// path against target and returns key → set of values, where the key is
// kind, root type and field-name path, and the value is the resolved
// target value or "poison". Local type IDs differ between objects by
// nature, so those resolve to the local type's name instead.
func resolvedRelocations(path string, target *btf.Spec) (map[string]map[string]bool, error) {
	coll, err := loadCollection(path)
	if err != nil {
		return nil, err
	}
	kinds := map[string]Kind{}
	for k := Kind(0); k < numKinds; k++ {
		kinds[k.String()] = k
	}
	out := map[string]map[string]bool{}
	names := make([]string, 0, len(coll.Programs))
	for n := range coll.Programs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		prog := coll.Programs[name]
		var relos []*btf.CORERelocation
		for i := range prog.Instructions {
			if r := btf.CORERelocationMetadata(&prog.Instructions[i]); r != nil {
				relos = append(relos, r)
			}
		}
		if len(relos) == 0 {
			continue
		}
		fixups, err := btf.CORERelocate(relos, []*btf.Spec{target}, coll.ByteOrder, coll.Types.TypeID)
		if err != nil {
			return nil, fmt.Errorf("program %q: %w", name, err)
		}
		for i, r := range relos {
			m := reCORERelocation.FindStringSubmatch(r.String())
			if m == nil {
				return nil, fmt.Errorf("program %q: cannot parse %q", name, r)
			}
			kind, ok := kinds[m[1]]
			if !ok {
				return nil, fmt.Errorf("program %q: unknown relocation kind in %q", name, r)
			}
			id, _ := strconv.ParseUint(m[3], 10, 32)
			res, err := resolve(coll.Types, RawRelocation{TypeID: uint32(id), Access: m[2], Kind: kind})
			if err != nil {
				return nil, fmt.Errorf("program %q: %q: %w", name, r, err)
			}
			key := kind.String() + " " + res.Path()
			val := "poison"
			if s := fixups[i].String(); !strings.HasSuffix(s, "=poison") {
				_, val, _ = strings.Cut(s, "->")
			}
			if kind == TypeIDLocal {
				val = "local " + describe(res.Root)
			}
			if out[key] == nil {
				out[key] = map[string]bool{}
			}
			out[key][val] = true
		}
	}
	return out, nil
}

// sameInstructions compares the executable sections of two objects.
func sameInstructions(a, b string) (bool, error) {
	sa, err := programSections(a)
	if err != nil {
		return false, err
	}
	sb, err := programSections(b)
	if err != nil {
		return false, err
	}
	if len(sa) != len(sb) {
		return false, nil
	}
	for name, data := range sa {
		if !bytes.Equal(data, sb[name]) {
			return false, nil
		}
	}
	return true, nil
}

// programSections returns the bytes of every executable section by name.
func programSections(path string) (map[string][]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: section %q: %w", path, s.Name, err)
		}
		out[s.Name] = data
	}
	return out, nil
}

// loadCollection reads the object at path as skeletons read it
// (bridge.ParseObject): with the __weak maps and kconfig externs libbpf
// accepts, as usdt.bpf.h defines them.
func loadCollection(path string) (*ebpf.CollectionSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	coll, err := bridge.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return coll, nil
}
