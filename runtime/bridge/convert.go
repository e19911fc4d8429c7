package bridge

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/runtime"
)

// programSpec turns a ubpf/ program of the object into the runtime's form:
// its instructions (bpf-to-bpf callees included, as cilium/ebpf links them)
// with map, data-section and extern references rewritten to indices.
func programSpec(spec *ebpf.CollectionSpec, p *ebpf.ProgramSpec, maps map[string]runtime.Map) (*runtime.ProgramSpec, error) {
	insns := make(asm.Instructions, len(p.Instructions))
	copy(insns, p.Instructions)
	rs := &runtime.ProgramSpec{Name: p.Name, Symbols: map[int]string{}}
	mapIdx := map[string]int{}
	externIdx := map[string]int{}
	slot := 0
	var kconfig map[string]btf.VarSecinfo
	for i := range insns {
		ins := &insns[i]
		if e, ok := ins.Metadata.Get(kconfigKey{}).(kconfigExtern); ok {
			// A .kconfig extern is read from the .kconfig map, as in
			// the kernel (resolveKconfig).
			if kconfig == nil {
				kconfig = kconfigOffsets(spec)
			}
			vsi, ok := kconfig[e.name]
			if !ok {
				return nil, fmt.Errorf("instruction %d: extern %s is not in .kconfig", i, e.name)
			}
			*ins = kconfigLoad(*ins, vsi.Offset+uint32(ins.Constant))
		}
		if sym := ins.Symbol(); sym != "" {
			rs.Symbols[slot] = sym
		}
		slot += int(ins.Size() / asm.InstructionSize)
		ref := ins.Reference()
		switch {
		case ref != "" && ins.IsLoadFromMap():
			m := maps[ref]
			if m == nil {
				return nil, fmt.Errorf("instruction %d: map %s not loaded", i, ref)
			}
			idx, ok := mapIdx[ref]
			if !ok {
				idx = len(rs.Maps)
				mapIdx[ref] = idx
				rs.Maps = append(rs.Maps, m)
			}
			off := uint64(ins.Constant) >> 32
			if ins.Src == asm.PseudoMapValue {
				ins.Src = asm.PseudoMapValue + 4 // BPF_PSEUDO_MAP_IDX_VALUE
			} else {
				ins.Src = asm.PseudoMapFD + 4 // BPF_PSEUDO_MAP_IDX
			}
			ins.Constant = int64(off<<32 | uint64(idx))
		case ref != "" && ins.IsKfuncCall():
			idx, ok := externIdx[ref]
			if !ok {
				idx = len(rs.Externs)
				externIdx[ref] = idx
				rs.Externs = append(rs.Externs, ref)
			}
			ins.Constant = int64(idx)
			ins.Offset = 0
		}
	}
	var buf bytes.Buffer
	if err := insns.Marshal(&buf, spec.ByteOrder); err != nil {
		return nil, err
	}
	decoded, err := runtime.DecodeInstructions(buf.Bytes(), spec.ByteOrder)
	if err != nil {
		return nil, err
	}
	rs.Instructions = decoded
	return rs, nil
}

// TranslationSpec returns the runtime's form of the user-space program
// name, with stand-in user-space maps, for translating it ahead of time.
// Map and global references resolve the same way as when the object is
// loaded, which Bind checks.
func TranslationSpec(spec *ebpf.CollectionSpec, name string) (*runtime.ProgramSpec, error) {
	p := spec.Programs[name]
	if p == nil || !IsUserProgram(p) {
		return nil, fmt.Errorf("no user-space program %s", name)
	}
	maps := map[string]runtime.Map{}
	mem := runtime.NewMapMemory(0)
	addressed := map[string]bool{} // maps whose values the program addresses (lddw of a value)
	for _, ins := range p.Instructions {
		if ins.Src == asm.PseudoMapValue && ins.Reference() != "" {
			addressed[ins.Reference()] = true
		}
	}
	for ref := range references(p, spec.Maps) {
		ms := spec.Maps[ref]
		if !addressed[ref] && len(ms.Contents) == 0 {
			// A translation depends on this map's spec alone: a stand-in
			// of one entry takes no memory, so that generation never
			// meets the map memory limit, which the user sets at load.
			one := ms.Copy()
			one.MaxEntries = 1
			m, err := userMap(one, spec.ByteOrder, mem)
			if err != nil {
				return nil, fmt.Errorf("map %s: %w", ref, err)
			}
			maps[ref] = standIn{m, runtimeSpec(ms)}
			continue
		}
		m, err := userMap(ms, spec.ByteOrder, mem)
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", ref, err)
		}
		maps[ref] = m
	}
	// The .kconfig externs read zero: their values are the load's.
	ks, err := kconfigMapSpec(spec, []*ebpf.ProgramSpec{p}, false)
	if err != nil {
		return nil, err
	}
	if ks != nil {
		if maps[kconfigMap], err = userMap(ks, spec.ByteOrder, mem); err != nil {
			return nil, fmt.Errorf("map %s: %w", kconfigMap, err)
		}
	}
	return programSpec(spec, p, maps)
}

// standIn is a map of one entry that gives the spec of the map it stands
// in for.
type standIn struct {
	runtime.Map
	spec runtime.MapSpec
}

func (s standIn) Spec() runtime.MapSpec { return s.spec }
