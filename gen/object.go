package gen

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime/bridge"
)

// Object is a parsed BPF ELF object: the bytes as given and cilium/ebpf's
// view of them.
type Object struct {
	// Name names the object in error messages (its file name).
	Name string
	// Data is the object file as it will be embedded.
	Data []byte
	// Spec is the object's collection spec, as cilium/ebpf reads it.
	Spec *ebpf.CollectionSpec
	// Order is the object's byte order.
	Order binary.ByteOrder
}

// ReadObject parses data as a BPF ELF object. Errors name the file and,
// where the fault lies in one, the section.
func ReadObject(name string, data []byte) (obj *Object, err error) {
	defer func() {
		// cilium/ebpf returns errors for malformed input; a panic deep in a
		// parser is still turned into an error naming the file rather than
		// taking the generator down.
		if r := recover(); r != nil {
			obj, err = nil, fmt.Errorf("%s: malformed object: %v", name, r)
		}
	}()
	if err := bridge.CheckObject(data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: truncated or malformed ELF: %w", name, err)
	}
	defer f.Close()
	if f.Section(".BTF") == nil {
		return nil, fmt.Errorf("%s: no .BTF section: compile with clang -g so that the object carries BTF", name)
	}
	if dup := duplicateSymbols(f); dup != "" {
		return nil, fmt.Errorf("%s: %s", name, dup)
	}
	spec, err := bridge.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if spec.Types == nil {
		return nil, fmt.Errorf("%s: section .BTF: no usable BTF", name)
	}
	return &Object{Name: name, Data: data, Spec: spec, Order: f.ByteOrder}, nil
}

// duplicateSymbols reports global function or object symbols defined twice:
// the skeleton names programs, maps and variables after them.
func duplicateSymbols(f *elf.File) string {
	syms, err := f.Symbols()
	if err != nil {
		return ""
	}
	where := map[string]string{}
	var dups []string
	for _, s := range syms {
		if s.Name == "" || elf.ST_BIND(s.Info) != elf.STB_GLOBAL || s.Section == elf.SHN_UNDEF {
			continue
		}
		typ := elf.ST_TYPE(s.Info)
		if typ != elf.STT_FUNC && typ != elf.STT_OBJECT {
			continue
		}
		sec := ""
		if int(s.Section) < len(f.Sections) {
			sec = f.Sections[s.Section].Name
		}
		if prev, ok := where[s.Name]; ok {
			dups = append(dups, fmt.Sprintf("symbol %s defined in sections %s and %s", s.Name, prev, sec))
			continue
		}
		where[s.Name] = sec
	}
	sort.Strings(dups)
	return strings.Join(dups, "; ")
}

// errUnsupported marks programs and maps the generator cannot type.
var errUnsupported = errors.New("unsupported")
