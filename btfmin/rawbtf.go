package btfmin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/cilium/ebpf/btf"
)

// maxReferenceDepth bounds how deep the types of a BTF may refer to each
// other: the most types on a chain of references (members, pointers,
// array elements, parameters, typedefs, ...), a set of types that refer
// to each other in a loop counting whole. cilium/ebpf decodes a type and
// all it refers to recursively, some kilobytes of stack a level: a chain
// of 200000 pointers (2.4 MB of BTF) takes it 2 s and 900 MB, one of
// 400000 overflows Go's stack, a fatal error no recover catches. So BTF
// passes this count before cilium/ebpf reads it. Real kernels count 3719
// (Linux 6.18 x86-64, whose largest loop holds 3538 types) and 4629
// (Debian's 6.12); 32768 levels cost cilium/ebpf about 140 MB.
const maxReferenceDepth = 1 << 15

// loadBTF reads raw BTF, or the .BTF of an ELF file, with cilium/ebpf,
// once its references nest no deeper than maxReferenceDepth.
func loadBTF(data []byte) (*btf.Spec, error) {
	raw, bo := data, dataByteOrder(data)
	if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		raw, bo = nil, nil
		if f, err := elf.NewFile(bytes.NewReader(data)); err == nil && f.Section(".BTF") != nil {
			if raw, err = f.Section(".BTF").Data(); err == nil {
				bo = f.ByteOrder
			}
		}
	}
	if err := checkReferenceDepth(raw, bo); err != nil {
		return nil, err
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a BTF file (raw BTF or an ELF object with .BTF): %w", err)
	}
	return spec, nil
}

// btfKinds names the kinds of BTF types by number, for messages.
var btfKinds = []string{"void", "int", "pointer", "array", "struct", "union", "enum", "fwd", "typedef",
	"volatile", "const", "restrict", "func", "func_proto", "var", "datasec", "float", "decl_tag",
	"type_tag", "enum64"}

// checkReferenceDepth reads the types of raw BTF as references between
// type IDs and finds the longest chain of them (see maxReferenceDepth),
// in time linear in the data: Tarjan's strongly connected components, in
// the order they complete, which puts every component after those it
// refers to. Data it cannot read passes: cilium/ebpf, which reads every
// type's header when it loads BTF, reports what is wrong with it.
func checkReferenceDepth(raw []byte, bo binary.ByteOrder) error {
	if bo == nil {
		return nil
	}
	r := reader{sec: ".BTF", b: raw, bo: bo}
	strs, err := stringTable(raw, bo)
	if err != nil {
		return nil
	}
	hdrLen, _ := r.u32(4)
	typeOff, _ := r.u32(8)
	typeLen, _ := r.u32(12)
	start, end := uint64(hdrLen)+uint64(typeOff), uint64(hdrLen)+uint64(typeOff)+uint64(typeLen)
	if end > uint64(len(raw)) {
		return nil
	}
	// Type i refers to refs[first[i]:first[i+1]]; type 0 is void.
	kinds, names := []uint8{0}, []uint32{0}
	first, refs := []int32{0, 0}, []int32{}
	for off := int(start); off < int(end); {
		if off+12 > int(end) {
			return nil
		}
		name, info, typ := bo.Uint32(raw[off:]), bo.Uint32(raw[off+4:]), bo.Uint32(raw[off+8:])
		kind, vlen := uint8(info>>24&0x1f), int(info&0xffff)
		extra, each := 0, 0
		ref := func(at int) { refs = append(refs, int32(min(bo.Uint32(raw[at:]), 1<<31-1))) }
		switch kind {
		case 1, 14, 17: // int, var, decl_tag: 4 bytes
			extra = 4
		case 3: // array: elements, index, count
			extra = 12
		case 4, 5, 15, 19: // struct, union, datasec, enum64: 12 bytes each
			each = 12
		case 6, 13: // enum, func_proto: 8 bytes each
			each = 8
		case 7, 16, 2, 8, 9, 10, 11, 12, 18:
		default:
			return nil
		}
		next := off + 12 + extra + vlen*each
		if next > int(end) {
			return nil
		}
		switch kind {
		case 2, 8, 9, 10, 11, 12, 13, 14, 17, 18: // what it refers to is in the header
			refs = append(refs, int32(min(typ, 1<<31-1)))
		case 3:
			ref(off + 12)
			ref(off + 16)
		}
		for i := range vlen {
			switch at := off + 12 + i*each; kind {
			case 4, 5: // name, type, offset
				ref(at + 4)
			case 13: // name, type
				ref(at + 4)
			case 15: // type, offset, size
				ref(at)
			}
		}
		kinds, names = append(kinds, kind), append(names, name)
		first = append(first, int32(len(refs)))
		off = next
	}

	n := int32(len(kinds))
	index, low, comp := make([]int32, n), make([]int32, n), make([]int32, n)
	for i := range comp {
		comp[i] = -1
	}
	var depth []int   // of each component: the most types on a chain from it
	var stack []int32 // Tarjan's
	type frame struct{ v, next int32 }
	var calls []frame
	count := int32(0)
	push := func(v int32) {
		count++
		index[v], low[v] = count, count
		stack = append(stack, v)
		calls = append(calls, frame{v, first[v]})
	}
	for s := range n {
		if index[s] != 0 {
			continue
		}
		push(s)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < first[v+1] {
				w := refs[f.next]
				f.next++
				switch {
				case w >= n:
					// cilium/ebpf reports the missing type
				case index[w] == 0:
					push(w)
				case comp[w] < 0:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			c := int32(len(depth))
			i := len(stack) - 1
			for stack[i] != v {
				i--
			}
			members := stack[i:]
			stack = stack[:i]
			below := 0
			for _, m := range members {
				comp[m] = c
			}
			for _, m := range members {
				for _, w := range refs[first[m]:first[m+1]] {
					if w < n && comp[w] != c {
						below = max(below, depth[comp[w]])
					}
				}
			}
			depth = append(depth, len(members)+below)
		}
	}
	for id := range n {
		if depth[comp[id]] > maxReferenceDepth {
			what := btfKinds[0]
			if int(kinds[id]) < len(btfKinds) {
				what = btfKinds[kinds[id]]
			}
			if name, _ := cstring(strs, names[id]); name != "" {
				what += " " + strconv.Quote(name)
			}
			return fmt.Errorf("type %d (%s): types refer to each other more than %d levels deep", id, what, maxReferenceDepth)
		}
	}
	return nil
}
