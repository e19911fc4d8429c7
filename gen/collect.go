package gen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/runtime/bridge"
)

// reservedFields are names of the Objects type's own methods and fields.
var reservedFields = []string{"Close", "Collection", "Variables", "AttachAll", "Serve"}

// collect decides the Go shape of every map, program and variable.
func (s *skeleton) collect() error {
	spec := s.obj.Spec
	events, extra, err := s.eventTypes()
	if err != nil {
		return err
	}
	for _, t := range extra {
		if _, err := s.types.GoType(t); err != nil {
			return fmt.Errorf("-type %s: %w", t.TypeName(), err)
		}
	}
	taken := map[string]bool{}
	for _, r := range reservedFields {
		taken[r] = true
	}
	var mapNames, progNames []string
	for _, name := range sortedNames(spec.Maps) {
		if !isDataSection(name) {
			mapNames = append(mapNames, name)
		}
	}
	progNames = sortedNames(spec.Programs)
	// Maps and programs are fields of one struct: one scope (see naming.go).
	fields := assignNames(append(append([]string(nil), mapNames...), progNames...), taken)
	mapFields, progFields := map[string]string{}, map[string]string{}
	for i, name := range mapNames {
		mapFields[name] = fields[i]
	}
	for i, name := range progNames {
		progFields[name] = fields[len(mapNames)+i]
	}
	for _, name := range mapNames {
		m := &mapInfo{name: name, spec: spec.Maps[name]}
		m.field = mapFields[name]
		if err := s.typeMap(m, events[name]); err != nil {
			return fmt.Errorf("map %q: %w", name, err)
		}
		s.maps = append(s.maps, m)
	}
	for _, name := range progNames {
		p := spec.Programs[name]
		if bridge.IsUserProgram(p) {
			continue
		}
		if p.Type == ebpf.UnspecifiedProgram {
			return fmt.Errorf("section %q: program %q: unknown program kind (section names follow libbpf: tracepoint/, kprobe/, xdp, ...; ubpf/ for user space): %w", p.SectionName, name, errUnsupported)
		}
		s.programs = append(s.programs, &progInfo{name: name, field: progFields[name], spec: p, kind: bridge.KindOf(p)})
	}
	if err := s.collectUser(progFields); err != nil {
		return err
	}
	var varNames []string
	for _, name := range sortedNames(spec.Variables) {
		if v := spec.Variables[name]; v.SectionName != ".kconfig" && v.SectionName != ".ksyms" {
			varNames = append(varNames, name)
		}
	}
	varFields := assignNameMap(varNames, map[string]bool{})
	for _, name := range varNames {
		v := spec.Variables[name]
		vi := &varInfo{name: name, spec: v}
		vi.field = varFields[name]
		vi.typ = s.valueType(v.Type, int(v.Size()), s.prefix+vi.field)
		s.vars = append(s.vars, vi)
	}
	return nil
}

// valueType returns the Go type of a BTF type, falling back to a byte array
// of size bytes when there is no BTF or the type cannot be represented.
func (s *skeleton) valueType(t btf.Type, size int, anonName string) jen.Code {
	if v, ok := t.(*btf.Var); ok {
		t = nil
		if v != nil {
			t = v.Type
		}
	}
	if t != nil {
		if anonName != "" {
			s.types.Name(t, anonName)
		}
		if code, err := s.types.GoType(t); err == nil {
			if sz, err := btf.Sizeof(t); err == nil && sz == size {
				return code
			}
		}
	}
	code, text := s.types.byteArray(uint32(size))
	s.verb.known(code, text)
	return code
}

// typeMap picks the bridge wrapper of a map and its Go key and value types.
func (s *skeleton) typeMap(m *mapInfo, event btf.Type) error {
	ms := m.spec
	b := s.bridge
	key := func() jen.Code {
		if ms.KeySize == 0 {
			return s.emptyStruct()
		}
		return s.valueType(ms.Key, int(ms.KeySize), s.prefix+m.field+"Key")
	}
	value := func() jen.Code {
		return s.valueType(ms.Value, int(ms.ValueSize), s.prefix+m.field+"Value")
	}
	raw := func(why string) {
		m.rawValue = true
		m.typ = genericRef{ptr: true, path: pkgEbpf, name: "Map"}
		m.doc = why
	}
	generic := func(wrapper string, params ...jen.Code) {
		m.typ = genericRef{ptr: true, path: b, name: wrapper, params: params}
	}
	switch ms.Type {
	case ebpf.Hash, ebpf.Array, ebpf.LRUHash, ebpf.LPMTrie:
		generic("Map", key(), value())
	case ebpf.Queue, ebpf.Stack:
		generic("Map", s.emptyStruct(), value())
	case ebpf.BloomFilter:
		generic("BloomFilter", value())
	case ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash:
		generic("PerCPUMap", key(), value())
	case ebpf.ArrayOfMaps, ebpf.HashOfMaps:
		generic("MapOfMaps", key())
	case ebpf.RingBuf, ebpf.PerfEventArray:
		wrapper := "RingBuf"
		if ms.Type == ebpf.PerfEventArray {
			wrapper = "PerfEventArray"
		}
		guess := s.cfg.Records[m.name]
		if event == nil {
			if note := s.recordNote[m.name]; note != "" {
				raw(note)
			} else if guess.Why != "" && guess.Type == "" {
				raw(guess.Why)
			} else {
				raw("record type unknown: name it with -type")
			}
			return nil
		}
		if note := s.recordNote[m.name]; note != "" {
			m.doc = note
		} else if s.fromTypeFlag[m.name] {
			m.doc = "records typed by -type"
		} else if guess.Type != "" {
			m.doc = guess.Why
		}
		code, err := s.types.GoType(event)
		if err != nil {
			return err
		}
		generic(wrapper, code)
	case ebpf.StackTrace:
		m.rawValue = true
		generic("StackTraceMap")
	case ebpf.StructOpsMap:
		m.rawValue = true
		m.typ = genericRef{ptr: true, path: b, name: "StructOps"}
		m.specValue = value()
		m.doc = s.structOpsDoc(ms)
	case ebpf.UnspecifiedMap:
		return fmt.Errorf("unsupported map type %v: %w", ms.Type, errUnsupported)
	default:
		raw(strings.ToLower(ms.Type.String()) + " map: no typed view")
	}
	return nil
}

// structOpsDoc says which program fills each function member of the
// struct_ops map ms, as cilium/ebpf links them (ProgramSpec.AttachTo is
// "<struct>:<member>").
func (s *skeleton) structOpsDoc(ms *ebpf.MapSpec) string {
	st, ok := btf.As[*btf.Struct](ms.Value)
	if !ok {
		return "struct_ops map"
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(s.obj.Spec.Programs)) {
		p := s.obj.Spec.Programs[name]
		if member, ok := strings.CutPrefix(p.AttachTo, st.Name+":"); ok && p.Type == ebpf.StructOps {
			parts = append(parts, fmt.Sprintf("%s is %s", member, name))
		}
	}
	doc := "struct " + st.Name + " registered by Attach"
	if len(parts) > 0 {
		doc += ": " + strings.Join(parts, ", ")
	}
	return doc
}

// emptyStruct is struct{}.
func (s *skeleton) emptyStruct() jen.Code {
	code := jen.Struct()
	s.verb.knownFunc(code, func(w *vtext) { w.s("struct{}") })
	return code
}

// genericRef is the type *path.name[params...] (ptr) or the expression
// path.name[params...], without brackets when there are no params.
type genericRef struct {
	ptr        bool
	path, name string
	params     []jen.Code
}

// code is r as jennifer code.
func (r genericRef) code() jen.Code {
	code := jen.Qual(r.path, r.name)
	if r.ptr {
		code = jen.Op("*").Add(code)
	}
	if len(r.params) > 0 {
		code = code.Types(r.params...)
	}
	return code
}

// generic appends r, with only its qualified name in the trailer.
func (w *vtext) generic(r genericRef) *vtext {
	if r.ptr {
		w.s("*")
	}
	w.qual(r.path, r.name)
	for i, p := range r.params {
		if i == 0 {
			w.s("[")
		} else {
			w.s(", ")
		}
		w.typ(p)
	}
	if len(r.params) > 0 {
		w.s("]")
	}
	return w
}

// specType is the type of the map's spec field, *bridge.<name>[params].
func (m *mapInfo) specType(bridge string) genericRef {
	switch {
	case m.specValue != nil:
		return genericRef{ptr: true, path: bridge, name: "StructOpsSpec", params: []jen.Code{m.specValue}}
	case m.rawValue:
		return genericRef{ptr: true, path: bridge, name: "RawMapSpec"}
	}
	return genericRef{ptr: true, path: bridge, name: "MapSpec"}
}
