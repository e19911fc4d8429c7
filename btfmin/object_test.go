package btfmin

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// Malformed BTF with loops C cannot write is refused with the type named,
// before any walk over it could recurse forever.
func TestTypeLoops(t *testing.T) {
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}

	// A pointer to a const of itself: no struct in between.
	ptr := &btf.Pointer{}
	ptr.Target = &btf.Const{Type: ptr}
	loopVar := &btf.Var{Name: "p", Type: ptr}

	// A struct holding itself by value, through a typedef.
	self := &btf.Struct{Name: "self", Size: 8}
	self.Members = []btf.Member{{Name: "a", Type: i32}, {Name: "me", Type: &btf.Typedef{Name: "self_t", Type: self}, Offset: 32}}

	// An anonymous struct pointing at itself: C cannot name it.
	anonSelf := &btf.Struct{Size: 8}
	anonSelf.Members = []btf.Member{{Name: "next", Type: &btf.Pointer{Target: anonSelf}}}
	anonVar := &btf.Var{Name: "a", Type: anonSelf}

	// A list: a struct pointing at itself is fine.
	list := &btf.Struct{Name: "list", Size: 8}
	list.Members = []btf.Member{{Name: "next", Type: &btf.Pointer{Target: list}}}

	for _, tt := range []struct {
		name  string
		types []btf.Type
		check func(*btf.Spec, []btf.Type) error
		want  string
	}{
		{"pointer loop", []btf.Type{loopVar}, checkReferenceLoops, "refers to itself without a named struct or union in between"},
		{"anonymous struct loop", []btf.Type{anonVar}, checkReferenceLoops, "refers to itself without a named struct or union in between"},
		{"by value", []btf.Type{self}, checkContainment, `struct "self" contains itself by value`},
		{"list by reference", []btf.Type{list}, checkReferenceLoops, ""},
		{"list by value", []btf.Type{list}, checkContainment, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(specOf(t, tt.types...), nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("well-formed BTF refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
