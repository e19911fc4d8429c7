package gen

import (
	"reflect"
	"testing"
)

// TestExternParamNames: the host interface takes parameter names from the
// source's __ksym declarations, which the object's BTF lacks (clang writes
// none for extern functions); unnamed parameters stay "".
func TestExternParamNames(t *testing.T) {
	src := `
/* extern void commented(int a) __ksym; */
extern void host_metric(const char *name, __u64 value) __ksym;
extern __u64 host_now(void) __ksym;
extern int host_anon(const char *, unsigned int) __ksym;
extern void host_arr(struct sample *s, char buf[16]) __ksym;
extern int not_ksym(int x);
`
	got := externParamNames([]byte(src))
	want := map[string][]string{
		"host_metric": {"name", "value"},
		"host_now":    {},
		"host_anon":   {"", ""},
		"host_arr":    {"s", "buf"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("externParamNames = %q, want %q", got, want)
	}
}
