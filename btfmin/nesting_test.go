package btfmin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// nested is struct s0 { struct s1 a; }, struct s1 { struct s2 a; }, ...
// down to struct sN { int a; }: depth structs by value.
func nested(depth int) *btf.Struct {
	var inner btf.Type = i32T()
	for i := depth; i >= 0; i-- {
		inner = &btf.Struct{Name: "s" + strconv.Itoa(i), Size: 4, Members: []btf.Member{{Name: "a", Type: inner}}}
	}
	return inner.(*btf.Struct)
}

// selfContaining is struct S { int a; X me; } where X holds S by value
// through wrap.
func selfContaining(wrap func(*btf.Struct) btf.Type) *btf.Struct {
	s := &btf.Struct{Name: "S", Size: 8}
	s.Members = []btf.Member{{Name: "a", Type: i32T()}, {Name: "me", Type: wrap(s), Offset: 32}}
	return s
}

// chain is struct T { X f; } where X is n levels of link over int (a
// link may use the level below more than once).
func chain(n int, link func(btf.Type, int) btf.Type) *btf.Struct {
	t := i32T()
	for i := range n {
		t = link(t, i)
	}
	return &btf.Struct{Name: "T", Size: 8, Members: []btf.Member{{Name: "f", Type: t}}}
}

// ring is struct s0 { struct s1 *next; }, ..., struct sN-1 { struct s0
// *next; }: a list of n types that refer to each other in a loop, which
// cilium/ebpf would decode n pointers and n structs deep.
func ring(n int) *btf.Struct {
	structs := make([]*btf.Struct, n)
	for i := range structs {
		structs[i] = &btf.Struct{Name: "s" + strconv.Itoa(i), Size: 8}
	}
	for i, s := range structs {
		s.Members = []btf.Member{{Name: "next", Type: &btf.Pointer{Target: structs[(i+1)%n]}}}
	}
	return structs[0]
}

// twoParams is int (T a, T b).
func twoParams(t btf.Type) *btf.FuncProto {
	return &btf.FuncProto{Return: i32T(), Params: []btf.FuncParam{{Name: "a", Type: t}, {Name: "b", Type: t}}}
}

func decl(d string) Config { return Config{Decls: []string{d}} }

func pointerTo(t btf.Type, _ int) btf.Type { return &btf.Pointer{Target: t} }
func typedefOf(t btf.Type, i int) btf.Type {
	return &btf.Typedef{Name: "t" + strconv.Itoa(i), Type: t}
}

// TestHostileKernelShapes: kernel BTF whose types nest deep, contain
// themselves or loop gives a header or an error naming the file and the
// type, in time linear in its size: no stack overflow, no hang
// (testenv.NoHang bounds what was exponential or quadratic before).
func TestHostileKernelShapes(t *testing.T) {
	cyclic := &btf.Typedef{Name: "A"}
	cyclic.Type = &btf.Typedef{Name: "B", Type: cyclic}
	for _, tt := range []struct {
		name string
		root btf.Type
		ask  Config // the -decl or -field
		// want is in the error after "kernel BTF FILE: " (after "field
		// F: " for a -field); "" when a header holding header is wanted.
		want, header string
	}{
		{"nested 40 deep", nested(40), decl("struct s0"), "", "struct s40 {\n\tint a;\n};"},
		{"nested 2000 deep", nested(2000), decl("struct s0"), `type struct "s0" nests deeper than 1024 levels by value`, ""},
		{"contains itself", selfContaining(func(s *btf.Struct) btf.Type { return s }), decl("struct S"), `type struct "S" contains itself by value`, ""},
		{"through typedef", selfContaining(func(s *btf.Struct) btf.Type { return &btf.Typedef{Name: "S_t", Type: s} }), decl("struct S"),
			`contains itself by value`, ""},
		{"through array", selfContaining(func(s *btf.Struct) btf.Type { return &btf.Array{Index: i32T(), Type: s, Nelems: 1} }), decl("struct S"),
			`contains itself by value`, ""},
		{"through struct", selfContaining(func(s *btf.Struct) btf.Type {
			return &btf.Struct{Name: "O", Size: 8, Members: []btf.Member{{Name: "s", Type: s}}}
		}), decl("struct S"), `contains itself by value`, ""},
		{"through anonymous union", selfContaining(func(s *btf.Struct) btf.Type {
			return &btf.Union{Size: 8, Members: []btf.Member{{Name: "s", Type: s}}}
		}), decl("struct S"), `contains itself by value`, ""},
		{"1000 pointers", chain(1000, pointerTo), decl("struct T"), "", "int " + strings.Repeat("*", 1000) + "f;"},
		{"2000 pointers", chain(2000, pointerTo), decl("struct T"), `type struct "T" nests deeper than 1024 levels of pointers`, ""},
		{"2000 typedefs", chain(2000, typedefOf), decl("struct T"), `type struct "T" nests deeper than 1024 levels of pointers`, ""},
		// Refused before cilium/ebpf reads them (loadBTF): it decodes
		// recursively, and 400000 levels overflow its stack.
		{"200000 pointers", chain(200000, pointerTo), decl("struct T"), `type 1 (struct "T"): types refer to each other more than 32768 levels deep`, ""},
		{"400000 typedefs", chain(400000, typedefOf), decl("struct T"), `type 1 (struct "T"): types refer to each other more than 32768 levels deep`, ""},
		{"40000 structs in a loop", ring(40000), decl("struct s0"), `type 1 (struct "s0"): types refer to each other more than 32768 levels deep`, ""},
		{"shared typedef'd prototypes", chain(40, func(t btf.Type, i int) btf.Type {
			return &btf.Typedef{Name: "f" + strconv.Itoa(i), Type: &btf.Pointer{Target: twoParams(t)}}
		}), decl("struct T"), "", "typedef int (*f39)(f38 a, f38 b);"},
		{"shared prototypes", chain(40, func(t btf.Type, _ int) btf.Type { return &btf.Pointer{Target: twoParams(t)} }), decl("struct T"),
			`struct "T" member "f": the header would be larger than 16 MB`, ""},
		{"shared anonymous structs", chain(40, func(t btf.Type, _ int) btf.Type {
			return &btf.Struct{Size: 4, Members: []btf.Member{{Name: "a", Type: t}, {Name: "b", Type: t}}}
		}), decl("struct T"), `the header would be larger than 16 MB`, ""},
		{"shared anonymous members", chain(40, func(t btf.Type, _ int) btf.Type {
			return &btf.Struct{Size: 4, Members: []btf.Member{{Type: t}, {Type: t}}}
		}), Config{Fields: []string{"T.f.nope"}}, `no such member`, ""},
		{"cyclic typedef", &btf.Struct{Name: "T", Size: 8, Members: []btf.Member{{Name: "f", Type: cyclic}}}, decl("struct T"),
			`refers to itself without a named struct or union in between`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kernel := writeBTF(t, tt.root)
			var res *Result
			var err error
			testenv.NoHang(t, "Generate", 2*time.Minute, func() {
				cfg := tt.ask
				cfg.KernelBTF = []string{kernel}
				res, err = Generate(cfg)
			})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if h := string(res.Header); !strings.Contains(h, tt.header) {
					t.Fatalf("header lacks %q:\n%s", tt.header, h)
				}
				return
			}
			want := "kernel BTF " + kernel + ": "
			if tt.ask.Fields != nil {
				want = "field " + tt.ask.Fields[0] + ": "
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q then %q", err, want, tt.want)
			}
			if res != nil {
				t.Error("a header came with the error")
			}
		})
	}
}

// TestHostileKernelFromSource: the header made from a source alone takes
// its types from the kernel BTF as clang asks for them, and a type that
// contains itself, or nests too deep, is the same error there.
func TestHostileKernelFromSource(t *testing.T) {
	clang := testenv.Clang(t)
	for _, tt := range []struct {
		name string
		root btf.Type
		want string
	}{
		{"contains itself", selfContaining(func(s *btf.Struct) btf.Type { return &btf.Typedef{Name: "S_t", Type: s} }), `type struct "S" contains itself by value`},
		{"2000 pointers", &btf.Struct{Name: "S", Size: 8, Members: []btf.Member{{Name: "a", Type: chain(2000, pointerTo).Members[0].Type}}},
			`type struct "S" nests deeper than 1024 levels of pointers`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kernel := writeBTF(t, tt.root)
			src := filepath.Join(t.TempDir(), "s.bpf.c")
			if err := os.WriteFile(src, []byte("#include \"vmlinux.h\"\nint f(struct S *s) { return sizeof(s->a); }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			testenv.NoHang(t, "FromSource", 2*time.Minute, func() {
				_, _, err = FromSource(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang})
			})
			if want := "kernel BTF " + kernel + ": " + tt.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
		})
	}
}
