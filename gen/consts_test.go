package gen

import (
	"fmt"
	"strings"
	"testing"
)

func TestSourceConstants(t *testing.T) {
	src := `#include <x.h>
#define A 3 /* comment */
#define B (A << 2) // another
#  define C 0x10u
#define M(x) x
#define EMPTY
#define TWICE 1
#define TWICE 2
#if X
#define P 1
#endif
#define CONT (1 + \
	2)
enum { E0, E1, E5 = 5, E6 = f(1, 2), };
enum named { N0, N1 = E6 };
int f(void) { enum { LOCAL = 1 }; return LOCAL; }
typedef enum { T0 = 7 } t_t;
`
	consts, enums := sourceConstants(src)
	var got []string
	for _, c := range consts {
		got = append(got, fmt.Sprintf("%s:%d:%s", c.name, c.line, c.text))
	}
	want := "A:2:3 B:3:(A << 2) C:4:0x10u TWICE:7:1 TWICE:8:2 P:10:1 CONT:12:(1 + 2) E0:14: E1:14: E5:14: E6:14: T0:17:"
	if strings.Join(got, " ") != want {
		t.Errorf("candidates\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if strings.Join(enums, " ") != "named" {
		t.Errorf("named enums %v, want [named]", enums)
	}
}

// FuzzSourceConstants: any source text gives candidates without a panic
// or a hang, each named by a C identifier.
func FuzzSourceConstants(f *testing.F) {
	f.Add("#define A (1 << 3)\nenum { B = A, C };\n")
	f.Add("#define X ((((((1))))))\n#define Y X*X*X*X*X*X*X*X*X*X*X*X*X*X\n")
	f.Add("enum { A = 1 << 63, B, C };")
	f.Fuzz(func(t *testing.T, src string) {
		consts, _ := sourceConstants(src)
		for _, c := range consts {
			if !reEnumerator.MatchString(c.name) || strings.ContainsAny(c.name, " \t\n") {
				t.Errorf("candidate %q is no C name", c.name)
			}
		}
	})
}
