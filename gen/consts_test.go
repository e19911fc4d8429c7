package gen

import (
	"go/constant"
	"strings"
	"testing"
)

func TestSourceConstants(t *testing.T) {
	src := `#include <x.h>
#define A 3 /* comment */
#define B (A << 2) // another
#  define C 0x10u
#define D 'a'
#define E -(A * 2 + 1)
#define F (10 / 3 + 10 % 3 + -7 / 2)
#define G (A > 2 ? 1 : 2)
#define H ~0
#define I (1 << 64)
#define J (1 / 0)
#define K "x\ty" "z"
#define L sizeof(int)
#define M(x) x
#define N UNKNOWN
#define O (A == 3) + (A != 3) + !A + (A && 0) + (A || 0)
#define EMPTY
#define TWICE 1
#define TWICE 2
#if X
#define P 1
#else
#define Q 1
#endif
#define R 9
#undef R
enum { E0, E1, E5 = 5, E6, EB = B };
enum named { N0, N1 = E6 };
int f(void) { enum { LOCAL = 1 }; return LOCAL; }
typedef enum { T0 = 7 } t_t;
#define AFTER N1
`
	consts, enums := sourceConstants(src)
	want := map[string]string{
		"A": "3", "B": "12", "C": "16", "D": "97", "E": "-7", "F": "1", "H": "-1",
		"K": `"x\ty" + "z"`, "O": "2", "TWICE": "2",
		"E0": "0", "E1": "1", "E5": "5", "E6": "6", "EB": "12", "T0": "7", "AFTER": "6",
	}
	got := map[string]string{}
	var order []string
	for _, c := range consts {
		v := c.value.ExactString()
		if c.value.Kind() == constant.String {
			v = `"x\ty" + "z"`
			if constant.StringVal(c.value) != "x\tyz" {
				v = c.value.ExactString()
			}
		}
		got[c.name] = v
		order = append(order, c.name)
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %q, want %q", name, got[name], v)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s = %s: not a constant of the source", name, got[name])
		}
	}
	if strings.Join(order, " ") != "A B C D E F H K O TWICE E0 E1 E5 E6 EB T0 AFTER" {
		t.Errorf("order %v", order)
	}
	if strings.Join(enums, " ") != "named" {
		t.Errorf("named enums %v, want [named]", enums)
	}
	for _, c := range consts {
		if c.name == "E5" && c.line != 27 || c.name == "B" && c.line != 3 {
			t.Errorf("%s at line %d", c.name, c.line)
		}
	}
}

// FuzzSourceConstants: any source text gives constants without a panic
// or a hang, each an integer of 64 bits or a string.
func FuzzSourceConstants(f *testing.F) {
	f.Add("#define A (1 << 3)\nenum { B = A, C };\n")
	f.Add("#define X ((((((1))))))\n#define Y X*X*X*X*X*X*X*X*X*X*X*X*X*X\n")
	f.Add("enum { A = 1 << 63, B, C };")
	f.Fuzz(func(t *testing.T, src string) {
		consts, _ := sourceConstants(src)
		for _, c := range consts {
			if c.value.Kind() == constant.Int && !fits64(c.value) {
				t.Errorf("%s = %s: more than 64 bits", c.name, c.value)
			}
		}
	})
}
