package btfmin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/editdist"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// Status is what a kernel makes of one program's CO-RE relocations and
// attach target.
type Status int

const (
	// Resolved: every relocation resolves.
	Resolved Status = iota
	// Guarded: some do not, and every instruction they poison is dead on
	// that kernel (the program tests bpf_core_field_exists or
	// bpf_core_type_exists first), so the verifier never reaches it.
	Guarded
	// Failed: a relocation that does not resolve sits on a reachable
	// instruction, and the kernel's verifier refuses the program; or the
	// kernel lacks the program's attach target.
	Failed
)

func (s Status) String() string {
	return [...]string{"ok", "guarded", "FAILS"}[s]
}

// KernelCheck is one object's programs against one kernel.
type KernelCheck struct {
	Object, Kernel string
	Programs       []ProgramCheck
}

// ProgramCheck is one kernel program against one kernel.
type ProgramCheck struct {
	Name, Section string
	Relocations   int
	Failures      []Failure
	// Target says what the kernel lacks of the attach target the section
	// names ("the kernel has no function do_unlinkat"); empty when the
	// kernel has it or its BTF cannot tell (attachTarget).
	Target string
}

// Status is Failed when the target is missing or one failure is
// unguarded, else Guarded when there are failures, else Resolved.
func (p *ProgramCheck) Status() Status {
	if p.Target != "" {
		return Failed
	}
	s := Resolved
	for _, f := range p.Failures {
		if !f.Guarded {
			return Failed
		}
		s = Guarded
	}
	return s
}

// Failure is one relocation that does not resolve on a kernel.
type Failure struct {
	// Line is where the source makes the access ("file.c:42: text"),
	// from .BTF.ext line info; empty without it.
	Line string
	// Kind is the relocation kind (byte_off, type_size, ...).
	Kind Kind
	// Access is the local access path, e.g. "struct task_struct[0].__state".
	Access string
	// Instead says what the kernel has in its place, e.g. "struct
	// task_struct has state (offset 24)", or that the type is missing.
	Instead string
	// Guarded is true when the poisoned instruction is dead on the
	// kernel.
	Guarded bool
}

func (f Failure) String() string {
	s := fmt.Sprintf("%s %s: %s", f.Kind, f.Access, f.Instead)
	if f.Line != "" {
		s = f.Line + ": " + s
	}
	if f.Guarded {
		s += " (guarded: dead on this kernel)"
	}
	return s
}

// CheckKernels resolves every CO-RE relocation of every kernel program of
// the object at path against each kernel, as cilium/ebpf does at load
// time, and says for each program whether it loads there. User-space
// programs (sections ubpf and ubpf/...) are not checked: they never reach
// a kernel. Kernels of the other byte order than the object's are left out,
// and so are kernels of another architecture than an object skelgen
// compiled for one (x_arm64_bpfel.o reads arm64's registers).
func CheckKernels(path string, kernels []Kernel) ([]KernelCheck, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return CheckKernelsData(path, data, kernels)
}

// CheckKernelsData is CheckKernels of an object in memory; path names it.
func CheckKernelsData(path string, data []byte, kernels []Kernel) ([]KernelCheck, error) {
	coll, err := bridge.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, len(coll.Programs))
	for n, p := range coll.Programs {
		if p.SectionName == "ubpf" || strings.HasPrefix(p.SectionName, "ubpf/") {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	arch := objectArch(path)
	var out []KernelCheck
	for _, k := range kernels {
		if k.ByteOrder != nil && k.ByteOrder != coll.ByteOrder {
			continue
		}
		if ka := kernelArch([]*btf.Spec{k.Spec}); arch != "" && ka != "" && ka != arch {
			continue
		}
		kc := KernelCheck{Object: filepath.Base(path), Kernel: k.Name}
		for _, name := range names {
			pc, err := checkProgram(coll, coll.Programs[name], k.Spec)
			if err != nil {
				return nil, fmt.Errorf("%s: program %s against kernel %s: %w", path, name, k.Name, err)
			}
			pc.Name = name
			kc.Programs = append(kc.Programs, pc)
		}
		out = append(out, kc)
	}
	return out, nil
}

// attachTarget is the kernel type the attach target of a section needs,
// where the kernel's BTF can tell: the function of fentry, fexit, fmod_ret
// and fsession, the bpf_lsm_ function of an LSM hook (lsm, lsm_cgroup),
// the bpf_iter_ function of an iterator, and the btf_trace_ typedef the
// kernel declares for each of its tracepoints, which tp_btf and raw_tp
// attach to and tracepoint/GROUP/NAME names (except the syscalls group,
// whose events the kernel makes per system call, without BTF of their
// own). Sleepable variants are checked as the others. Kprobes (any
// kernel symbol), freplace (another program's function), a target given
// at attach time, and a module's (module:name) are not checked. what
// says what the target is, in a message.
func attachTarget(section string) (name string, typ btf.Type, what string) {
	kind, rest, _ := strings.Cut(strings.TrimPrefix(section, "?"), "/")
	if rest == "" || strings.Contains(rest, ":") {
		return "", nil, ""
	}
	tracepoint := func(n string) (string, btf.Type, string) {
		return "btf_trace_" + n, (*btf.Typedef)(nil), "tracepoint " + n + " (typedef btf_trace_" + n + ")"
	}
	switch strings.TrimSuffix(kind, ".s") {
	case "fentry", "fexit", "fmod_ret", "fsession":
		return rest, (*btf.Func)(nil), "function " + rest
	case "lsm", "lsm_cgroup":
		return "bpf_lsm_" + rest, (*btf.Func)(nil), "LSM hook " + rest + " (function bpf_lsm_" + rest + ")"
	case "iter":
		return "bpf_iter_" + rest, (*btf.Func)(nil), "iterator " + rest + " (function bpf_iter_" + rest + ")"
	case "tp_btf", "raw_tp", "raw_tracepoint", "raw_tp.w", "raw_tracepoint.w":
		return tracepoint(rest)
	case "tracepoint", "tp":
		if group, n, ok := strings.Cut(rest, "/"); ok && group != "syscalls" && n != "" {
			return tracepoint(n)
		}
	}
	return "", nil, ""
}

// checkTarget says what the kernel lacks of the attach target of
// section, or "". A kernel file holds vmlinux's BTF alone: a target a
// module defines is missing there.
func checkTarget(section string, kernel *btf.Spec) string {
	name, typ, what := attachTarget(section)
	if name == "" {
		return ""
	}
	ts, _ := kernel.AnyTypesByName(name)
	for _, t := range ts {
		if sameKind(t, typ) {
			return ""
		}
	}
	return "the kernel has no " + what
}

func checkProgram(coll *ebpf.CollectionSpec, prog *ebpf.ProgramSpec, kernel *btf.Spec) (ProgramCheck, error) {
	pc := ProgramCheck{Section: prog.SectionName, Target: checkTarget(prog.SectionName, kernel)}
	var relos []*btf.CORERelocation
	var at []int // instruction index of each relocation
	for i := range prog.Instructions {
		if r := btf.CORERelocationMetadata(&prog.Instructions[i]); r != nil {
			relos = append(relos, r)
			at = append(at, i)
		}
	}
	pc.Relocations = len(relos)
	if len(relos) == 0 {
		return pc, nil
	}
	fixups, err := btf.CORERelocate(relos, []*btf.Spec{kernel}, coll.ByteOrder, coll.Types.TypeID)
	if err != nil {
		return pc, err
	}
	consts := map[int]uint64{}
	poisoned := map[int]int{} // instruction index → relocation
	for i, f := range fixups {
		s := f.String()
		if strings.HasSuffix(s, "=poison") {
			poisoned[at[i]] = i
			continue
		}
		if _, v, ok := strings.Cut(s, "->"); ok {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				consts[at[i]] = n
			}
		}
	}
	if len(poisoned) == 0 {
		return pc, nil
	}
	live := liveInstructions(prog.Instructions, consts, poisoned)
	idx := make([]int, 0, len(poisoned))
	for i := range poisoned {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		r := relos[poisoned[i]]
		f := Failure{Guarded: !live[i], Line: sourceLine(prog.Instructions, i)}
		m := reCORERelocation.FindStringSubmatch(r.String())
		if m == nil {
			return pc, fmt.Errorf("cannot parse %q", r)
		}
		kind := kindByName(m[1])
		id, _ := strconv.ParseUint(m[3], 10, 32)
		res, err := resolve(coll.Types, RawRelocation{TypeID: uint32(id), Access: m[2], Kind: kind})
		if err != nil {
			return pc, fmt.Errorf("%q: %w", r, err)
		}
		f.Kind, f.Access, f.Instead = kind, res.Path(), explain(&res, kernel)
		pc.Failures = append(pc.Failures, f)
	}
	return pc, nil
}

func kindByName(name string) Kind {
	for k := Kind(0); k < numKinds; k++ {
		if k.String() == name {
			return k
		}
	}
	return numKinds
}

// sourceLine returns the line info of instruction i: its own, else that
// of the next instruction with one before a jump (clang gives line info
// to the last instructions of a statement, after the relocated ones),
// else that of the nearest instruction before it.
func sourceLine(insns asm.Instructions, i int) string {
	line := func(j int) string {
		if l, ok := insns[j].Source().(*btf.Line); ok && l != nil {
			return fmt.Sprintf("%s:%d: %s", filepath.Base(l.FileName()), l.LineNumber(), strings.TrimSpace(l.Line()))
		}
		return ""
	}
	for j := i; j < len(insns); j++ {
		if l := line(j); l != "" {
			return l
		}
		if insns[j].OpCode.Class().IsJump() {
			break
		}
	}
	for j := i - 1; j >= 0; j-- {
		if l := line(j); l != "" {
			return l
		}
	}
	return ""
}

// explain says what the kernel has where a relocation wanted something it
// lacks: the root type missing, the first member of the path missing (with
// the members of similar names the kernel has instead), or the member
// being of another kind.
func explain(r *Relocation, kernel *btf.Spec) string {
	name := typeName(r.Root)
	root := btf.UnderlyingType(r.Root)
	essential := root.TypeName()
	if i := strings.Index(essential, "___"); i > 0 {
		essential = essential[:i]
	}
	if essential == "" {
		return "anonymous " + name + " cannot be matched in the kernel"
	}
	var cands []btf.Type
	ts, _ := kernel.AnyTypesByName(essential)
	for _, t := range ts {
		if sameKind(t, root) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return fmt.Sprintf("the kernel has no %s", kindOnly(root)+" "+essential)
	}
	switch {
	case r.Kind.IsEnum():
		if r.Enum == nil {
			return "enumerator not found"
		}
		var have []string
		for _, c := range cands {
			if e, ok := c.(*btf.Enum); ok {
				for _, v := range e.Values {
					have = append(have, v.Name)
				}
			}
		}
		if s := similar(r.Enum.Name, have); len(s) > 0 {
			return fmt.Sprintf("%s has no %s; it has %s", kindOnly(root)+" "+essential, r.Enum.Name, strings.Join(s, ", "))
		}
		return fmt.Sprintf("%s has no %s", kindOnly(root)+" "+essential, r.Enum.Name)
	case r.Kind.IsField():
		return explainField(r, cands[0])
	}
	return fmt.Sprintf("the kernel's %s does not match the program's", kindOnly(root)+" "+essential)
}

func explainField(r *Relocation, target btf.Type) string {
	cur := btf.UnderlyingType(target)
	var off uint32 // byte offset of cur in the root
	for _, s := range r.Steps {
		if s.Member < 0 {
			a, ok := cur.(*btf.Array)
			if !ok {
				return fmt.Sprintf("the kernel's %s is not an array", describe(cur))
			}
			cur = btf.UnderlyingType(a.Type)
			continue
		}
		m := members(s.Parent)[s.Member]
		if m.Name == "" {
			continue // found through the named member below it, as libbpf does
		}
		found, moff, ok := memberAt(cur, m.Name)
		if !ok {
			var have []string
			offs := map[string]uint32{}
			flatMembers(cur, 0, func(name string, at uint32) {
				have = append(have, name)
				offs[name] = at
			})
			s := similar(m.Name, have)
			if len(s) == 0 {
				return fmt.Sprintf("%s has no member %s", describe(cur), m.Name)
			}
			for i, n := range s {
				if at, ok := offs[n]; ok {
					s[i] = fmt.Sprintf("%s at offset %d", n, off+at)
				}
			}
			return fmt.Sprintf("%s has no member %s; it has %s", describe(cur), m.Name, strings.Join(s, ", "))
		}
		lk, tk := btf.UnderlyingType(m.Type), btf.UnderlyingType(found.Type)
		if !sameKind(lk, tk) && !(isComposite(lk) && isComposite(tk)) {
			return fmt.Sprintf("member %s is %s in the kernel, %s in the program", m.Name, describe(tk), describe(lk))
		}
		off += moff
		cur = tk
	}
	return fmt.Sprintf("the kernel's %s does not match the program's", describe(btf.UnderlyingType(target)))
}

// findMember finds a member by name in a struct or union, looking through
// anonymous members, and returns its byte offset.
func memberAt(t btf.Type, name string) (btf.Member, uint32, bool) {
	for _, m := range members(t) {
		if m.Name == name {
			return m, m.Offset.Bytes(), true
		}
		if m.Name == "" {
			if f, off, ok := memberAt(btf.UnderlyingType(m.Type), name); ok {
				return f, m.Offset.Bytes() + off, true
			}
		}
	}
	return btf.Member{}, 0, false
}

// flatMembers calls f for every named member of t, anonymous members'
// members included, with its byte offset.
func flatMembers(t btf.Type, base uint32, f func(string, uint32)) {
	for _, m := range members(t) {
		if m.Name == "" {
			flatMembers(btf.UnderlyingType(m.Type), base+m.Offset.Bytes(), f)
			continue
		}
		f(m.Name, base+m.Offset.Bytes())
	}
}

// similar returns the names of have that look like a rename of want,
// the closest kind found: equal but for underscores and case, else at
// most two edits apart, else one containing the other.
func similar(want string, have []string) []string {
	norm := func(s string) string { return strings.ToLower(strings.Trim(s, "_")) }
	w := norm(want)
	tiers := []func(n string) bool{
		func(n string) bool { return n == w },
		func(n string) bool { return editdist.Distance(n, w) <= 2 && len(w) > 3 },
		func(n string) bool {
			return len(w) >= 4 && strings.Contains(n, w) || len(n) >= 4 && strings.Contains(w, n)
		},
	}
	for _, match := range tiers {
		var out []string
		for _, h := range have {
			if n := norm(h); h != want && n != "" && match(n) {
				out = append(out, h)
			}
		}
		if len(out) > 0 {
			slices.Sort(out)
			out = slices.Compact(out)
			if len(out) > 5 {
				out = append(out[:5], "...")
			}
			return out
		}
	}
	return nil
}

func sameKind(a, b btf.Type) bool {
	return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

// kindOnly is the C keyword of a type's kind: struct, union, enum,
// typedef, or a word for the others.
func kindOnly(t btf.Type) string {
	k, _ := kindWord(t)
	return k
}

// WriteMatrix writes checks as a table, a row per program and a column
// per kernel (ok, guarded, or FAILS with the checks that failed: target,
// CO-RE), followed by every attach target a kernel lacks and every
// relocation that does not resolve, with its source line and what the
// kernel has instead.
// It returns the number of programs that fail on some kernel.
func WriteMatrix(w io.Writer, checks []KernelCheck) (failed int) {
	type row struct{ object, program string }
	var rows []row
	var kernels []string
	cell := map[row]map[string]*ProgramCheck{}
	for i := range checks {
		kc := &checks[i]
		if !slices.Contains(kernels, kc.Kernel) {
			kernels = append(kernels, kc.Kernel)
		}
		for j := range kc.Programs {
			r := row{kc.Object, kc.Programs[j].Name}
			if cell[r] == nil {
				rows = append(rows, r)
				cell[r] = map[string]*ProgramCheck{}
			}
			cell[r][kc.Kernel] = &kc.Programs[j]
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "object\tprogram")
	for _, k := range kernels {
		fmt.Fprintf(tw, "\t%s", k)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s", r.object, r.program)
		bad := false
		for _, k := range kernels {
			p := cell[r][k]
			if p == nil {
				fmt.Fprint(tw, "\t-")
				continue
			}
			fmt.Fprintf(tw, "\t%s", p.cell())
			bad = bad || p.Status() == Failed
		}
		fmt.Fprintln(tw)
		if bad {
			failed++
		}
	}
	tw.Flush()
	for _, r := range rows {
		for _, k := range kernels {
			p := cell[r][k]
			if p != nil && p.Target != "" {
				fmt.Fprintf(w, "%s %s on %s: attach target of section %s: %s\n", r.object, r.program, k, p.Section, p.Target)
			}
			if p == nil || len(p.Failures) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s %s on %s (%d of %d relocations do not resolve):\n", r.object, r.program, k, len(p.Failures), p.Relocations)
			for _, f := range p.Failures {
				fmt.Fprintf(w, "  %s\n", f)
			}
		}
	}
	return failed
}

// cell is p's status in the matrix: a failing program says which checks
// failed.
func (p *ProgramCheck) cell() string {
	s := p.Status()
	if s != Failed {
		return s.String()
	}
	var why []string
	if p.Target != "" {
		why = append(why, "target")
	}
	if slices.ContainsFunc(p.Failures, func(f Failure) bool { return !f.Guarded }) {
		why = append(why, "CO-RE")
	}
	return s.String() + " (" + strings.Join(why, ", ") + ")"
}

// reObjectArch matches the GOARCH in the name of an object skelgen
// compiled for an architecture target (x_amd64_bpfel.o).
var reObjectArch = regexp.MustCompile(`_([a-z0-9]+)_bpfe[lb]\.o$`)

// LinuxArch returns the Linux architecture of a GOARCH skelgen targets
// (as __TARGET_ARCH_<arch> and archMarks name it), or "" for another.
func LinuxArch(goarch string) string { return linuxArch[goarch] }

var linuxArch = map[string]string{
	"386": "x86", "amd64": "x86", "arm": "arm", "arm64": "arm64", "loong64": "loongarch",
	"mips": "mips", "mipsle": "mips", "mips64": "mips", "mips64le": "mips",
	"ppc64": "powerpc", "ppc64le": "powerpc", "riscv64": "riscv", "s390x": "s390",
}

// objectArch is the Linux architecture an object was compiled for, by its
// file name, or "" when the name says none.
func objectArch(path string) string {
	if m := reObjectArch.FindStringSubmatch(filepath.Base(path)); m != nil {
		return linuxArch[m[1]]
	}
	return ""
}
