package btfmin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/skelgen/skelgen/internal/testenv"
)

// layoutTypes builds types whose C spelling is easy to get wrong: bit
// fields, a packed struct, small and 64-bit enums, qualified pointers,
// function pointers, arrays of pointers and an anonymous union.
func layoutTypes() (*btf.Struct, *btf.Struct) {
	u8 := &btf.Int{Name: "unsigned char", Size: 1}
	u16 := &btf.Int{Name: "short unsigned int", Size: 2}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	u64 := &btf.Int{Name: "long long unsigned int", Size: 8}
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	small := &btf.Enum{Name: "small", Size: 1, Values: []btf.EnumValue{{Name: "SMALL_A", Value: 1}, {Name: "SMALL_B", Value: 200}}}
	wide := &btf.Enum{Name: "wide", Size: 8, Values: []btf.EnumValue{{Name: "WIDE_MAX", Value: 1 << 40}, {Name: "WIDE_ONE", Value: 1}}}
	half := &btf.Enum{Name: "half", Size: 2, Signed: true, Values: []btf.EnumValue{{Name: "HALF_NEG", Value: ^uint64(0)}}}
	wideSmall := &btf.Enum{Name: "wide_small", Size: 8, Values: []btf.EnumValue{{Name: "WIDE_SMALL", Value: 3}}}
	packed := &btf.Struct{Name: "packed_s", Size: 7, Members: []btf.Member{
		{Name: "a", Type: u8, Offset: 0},
		{Name: "b", Type: u32, Offset: 8},
		{Name: "c", Type: u16, Offset: 40},
	}}
	fn := &btf.FuncProto{Return: i32, Params: []btf.FuncParam{{Name: "x", Type: &btf.Pointer{Target: &btf.Const{Type: char}}}}}
	anon := &btf.Union{Size: 8, Members: []btf.Member{{Name: "u_word", Type: u64}, {Name: "u_half", Type: u32}}}
	s := &btf.Struct{Name: "layout_s", Size: 80, Members: []btf.Member{
		{Name: "flag_a", Type: u32, Offset: 0, BitfieldSize: 1},
		{Name: "flag_b", Type: u32, Offset: 1, BitfieldSize: 3},
		{Name: "flag_c", Type: u32, Offset: 13, BitfieldSize: 7},
		{Name: "kind", Type: small, Offset: 32},
		{Name: "p", Type: packed, Offset: 40},
		{Name: "cb", Type: &btf.Pointer{Target: fn}, Offset: 128},
		{Name: "", Type: anon, Offset: 192},
		{Name: "names", Type: &btf.Array{Type: &btf.Pointer{Target: char}, Index: u32, Nelems: 2}, Offset: 256},
		{Name: "cp", Type: &btf.Const{Type: &btf.Pointer{Target: char}}, Offset: 384},
		{Name: "w", Type: wide, Offset: 448},
		{Name: "h", Type: half, Offset: 128 + 64 + 64 + 128 + 64 + 64},
		{Name: "ws", Type: wideSmall, Offset: 128 + 64 + 64 + 128 + 64 + 64 + 64},
	}}
	return s, packed
}

// TestWriteLayouts writes layout_s with some members kept and checks the
// C with clang: in exact mode every kept member must sit at its BTF
// offset and the struct keep its size; in compact mode it must compile.
func TestWriteLayouts(t *testing.T) {
	clang := testenv.Clang(t)
	s, packed := layoutTypes()
	for _, mode := range []Mode{Compact, Exact} {
		t.Run(mode.String(), func(t *testing.T) {
			c := newChooser(nil)
			for _, name := range []string{"flag_c", "kind", "p", "cb", "u_half", "names", "cp", "w", "h", "ws"} {
				if err := c.keepPath(s, []pathElem{{name: name}}); err != nil {
					t.Fatal(err)
				}
			}
			header := mustWrite(t, c, mode, "__LAYOUT_H__")
			var checks strings.Builder
			// Layout only: clang's CO-RE pass rejects the unaligned member
			// of the packed struct, which says nothing about the header.
			checks.WriteString("#define BPF_NO_PRESERVE_ACCESS_INDEX\n#include \"layout.h\"\n")
			fmt.Fprintf(&checks, "_Static_assert(sizeof(struct packed_s) == %d, \"packed size\");\n", packed.Size)
			fmt.Fprintf(&checks, "_Static_assert(sizeof(enum small) == 1, \"enum size\");\n")
			fmt.Fprintf(&checks, "_Static_assert(sizeof(enum wide) == 8, \"enum64 size\");\n")
			fmt.Fprintf(&checks, "_Static_assert(sizeof(enum half) == 2 && HALF_NEG < 0, \"signed enum16\");\n")
			fmt.Fprintf(&checks, "_Static_assert(sizeof(enum wide_small) == 8, \"small enum64\");\n")
			if mode == Exact {
				fmt.Fprintf(&checks, "_Static_assert(sizeof(struct layout_s) == %d, \"size\");\n", s.Size)
				for _, m := range []string{"kind", "p", "cb", "u_half", "names", "cp", "w", "h", "ws"} {
					off := fieldOffset(t, s, m)
					fmt.Fprintf(&checks, "_Static_assert(__builtin_offsetof(struct layout_s, %s) == %d, %q);\n", m, off, m)
				}
			}
			checks.WriteString("int f(struct layout_s *l) { return l->flag_c + l->kind + l->p.b + l->cb(l->cp) + l->u_half + l->names[1][0] + (l->w == WIDE_MAX); }\n")
			dir := t.TempDir()
			src := filepath.Join(dir, "layout.c")
			if err := os.WriteFile(src, []byte(checks.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if diags, ok, err := compileSource(clang, src, nil, t.TempDir(), "layout.h", []byte(header), filepath.Join(dir, "out.o")); err != nil || !ok {
				t.Fatalf("%v\n%s\n%s", err, diags, header)
			}
		})
	}
}

// fieldOffset finds a member's byte offset in s, looking into anonymous
// members.
func fieldOffset(t *testing.T, s *btf.Struct, name string) int {
	t.Helper()
	chain := findMember(s, name)
	if chain == nil {
		t.Fatalf("no member %s", name)
	}
	var bits btf.Bits
	for _, st := range chain {
		bits += members(st.Parent)[st.Member].Offset
	}
	return int(bits / 8)
}
