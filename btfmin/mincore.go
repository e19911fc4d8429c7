package btfmin

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// MinimalKernelBTF returns the part of a kernel's BTF that the CO-RE
// relocations of an object's kernel programs need, as raw BTF in the
// object's byte order: what bpftool gen min_core_btf computes. The same
// object and kernel give the same bytes. Given to cilium/ebpf as
// CollectionOptions.Programs.KernelTypes on a kernel without BTF of its
// own, it resolves every relocation as the whole kernel BTF does, except
// target_type_id, whose IDs belong to the kernel's own BTF.
//
// For a field access it keeps each struct and union on the path with only
// the members the path goes through (at their offsets, the type's size
// kept), member types reached otherwise as empty shells of their name and
// size; for type_exists, type_size and target_type_id the type's shell;
// for type_matches the whole type; for enumerator relocations the enum.
func MinimalKernelBTF(object []byte, kernel *btf.Spec) ([]byte, error) {
	coll, err := bridge.ParseObject(object)
	if err != nil {
		return nil, err
	}
	m := &minimiser{keep: map[btf.Type]map[int]bool{}, whole: map[btf.Type]bool{}, made: map[btf.Type]btf.Type{}}
	var roots []btf.Type
	// Programs in name order, so that the same object and kernel give the
	// same bytes.
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		prog := coll.Programs[name]
		if prog.SectionName == "ubpf" || strings.HasPrefix(prog.SectionName, "ubpf/") {
			continue
		}
		for i := range prog.Instructions {
			r := btf.CORERelocationMetadata(&prog.Instructions[i])
			if r == nil {
				continue
			}
			sm := reCORERelocation.FindStringSubmatch(r.String())
			if sm == nil {
				return nil, fmt.Errorf("program %s: cannot parse %q", prog.Name, r)
			}
			kind := kindByName(sm[1])
			id, _ := strconv.ParseUint(sm[3], 10, 32)
			if kind == TypeIDLocal {
				continue
			}
			res, err := resolve(coll.Types, RawRelocation{TypeID: uint32(id), Access: sm[2], Kind: kind})
			if err != nil {
				return nil, fmt.Errorf("program %s: %q: %w", prog.Name, r, err)
			}
			for _, t := range candidates(res.Root, kernel) {
				roots = append(roots, t)
				switch {
				case kind.IsField():
					m.markPath(&res, t)
				case kind == TypeMatches:
					m.markWhole(t)
				}
			}
		}
	}
	var out []btf.Type
	for _, t := range roots {
		out = append(out, m.copy(t))
	}
	b, err := btf.NewBuilder(out, nil)
	if err != nil {
		return nil, err
	}
	return b.Marshal(nil, &btf.MarshalOptions{Order: coll.ByteOrder})
}

// candidates are the kernel's types of the relocation root's essential
// name and kind.
func candidates(root btf.Type, kernel *btf.Spec) []btf.Type {
	local := btf.UnderlyingType(root)
	name := local.TypeName()
	if i := strings.Index(name, "___"); i > 0 {
		name = name[:i]
	}
	if name == "" {
		return nil
	}
	ts, _ := kernel.AnyTypesByName(name)
	var out []btf.Type
	for _, t := range ts {
		if sameKind(t, local) {
			out = append(out, t)
		}
	}
	return out
}

type minimiser struct {
	keep  map[btf.Type]map[int]bool // struct or union → member indices kept
	whole map[btf.Type]bool
	made  map[btf.Type]btf.Type
}

func (m *minimiser) mark(t btf.Type, i int) {
	if m.keep[t] == nil {
		m.keep[t] = map[int]bool{}
	}
	m.keep[t][i] = true
}

// markPath keeps the members a field access goes through in target,
// anonymous members on the way included.
func (m *minimiser) markPath(r *Relocation, target btf.Type) {
	cur := btf.UnderlyingType(target)
	for _, s := range r.Steps {
		if s.Member < 0 {
			a, ok := cur.(*btf.Array)
			if !ok {
				return
			}
			cur = btf.UnderlyingType(a.Type)
			continue
		}
		name := members(s.Parent)[s.Member].Name
		if name == "" {
			continue
		}
		next, ok := m.markMember(cur, name)
		if !ok {
			return
		}
		cur = next
	}
}

// markMember keeps the member name of t (looking through anonymous
// members) and returns its type.
func (m *minimiser) markMember(t btf.Type, name string) (btf.Type, bool) {
	for i, mem := range members(t) {
		if mem.Name == name {
			m.mark(t, i)
			return btf.UnderlyingType(mem.Type), true
		}
		if mem.Name == "" {
			if typ, ok := m.markMember(btf.UnderlyingType(mem.Type), name); ok {
				m.mark(t, i)
				return typ, true
			}
		}
	}
	return nil, false
}

func (m *minimiser) markWhole(t btf.Type) {
	if m.whole[t] {
		return
	}
	m.whole[t] = true
	for _, mem := range members(t) {
		m.markWhole(btf.UnderlyingType(mem.Type))
	}
}

// copy makes t's minimal version, memoised so that shared types stay
// shared.
func (m *minimiser) copy(t btf.Type) btf.Type {
	if c, ok := m.made[t]; ok {
		return c
	}
	switch t := t.(type) {
	case *btf.Struct:
		c := &btf.Struct{Name: t.Name, Size: t.Size}
		m.made[t] = c
		c.Members = m.members(t, t.Members)
		return c
	case *btf.Union:
		c := &btf.Union{Name: t.Name, Size: t.Size}
		m.made[t] = c
		c.Members = m.members(t, t.Members)
		return c
	case *btf.Pointer:
		c := &btf.Pointer{}
		m.made[t] = c
		if _, fn := btf.UnderlyingType(t.Target).(*btf.FuncProto); fn {
			c.Target = &btf.Void{}
		} else {
			c.Target = m.copy(t.Target)
		}
		return c
	case *btf.Array:
		c := &btf.Array{Nelems: t.Nelems}
		m.made[t] = c
		c.Index, c.Type = m.copy(t.Index), m.copy(t.Type)
		return c
	case *btf.Typedef:
		c := &btf.Typedef{Name: t.Name}
		m.made[t] = c
		c.Type = m.copy(t.Type)
		return c
	case *btf.Const:
		c := &btf.Const{}
		m.made[t] = c
		c.Type = m.copy(t.Type)
		return c
	case *btf.Volatile:
		c := &btf.Volatile{}
		m.made[t] = c
		c.Type = m.copy(t.Type)
		return c
	case *btf.Restrict:
		c := &btf.Restrict{}
		m.made[t] = c
		c.Type = m.copy(t.Type)
		return c
	case *btf.TypeTag:
		return m.copy(t.Type)
	case *btf.Int, *btf.Float, *btf.Enum, *btf.Fwd, *btf.Void:
		return t
	}
	// Functions, variables and the like are not members of anything a
	// relocation reaches.
	return &btf.Void{}
}

// members returns the kept members of t: all when t is kept whole, else
// those marked.
func (m *minimiser) members(t btf.Type, ms []btf.Member) []btf.Member {
	var out []btf.Member
	for i, mem := range ms {
		if !m.whole[t] && !m.keep[t][i] {
			continue
		}
		mem.Type = m.copy(mem.Type)
		out = append(out, mem)
	}
	return out
}
