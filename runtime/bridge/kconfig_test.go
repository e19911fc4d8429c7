package bridge

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

func TestPutKconfig(t *testing.T) {
	boolT := &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}
	charT := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	u32 := &btf.Typedef{Name: "__u32", Type: &btf.Int{Name: "unsigned int", Size: 4}}
	s16 := &btf.Int{Name: "short", Size: 2, Encoding: btf.Signed}
	tri := &btf.Enum{Name: "libbpf_tristate", Size: 4}
	str := &btf.Array{Type: charT, Nelems: 6}
	ne := binary.NativeEndian
	u32b := func(v uint32) []byte { b := make([]byte, 4); ne.PutUint32(b, v); return b }
	for _, c := range []struct {
		typ   btf.Type
		value string
		want  []byte
		err   string
	}{
		{boolT, "y", []byte{1}, ""},
		{boolT, "n", []byte{0}, ""},
		{boolT, "m", nil, "m (module) for a bool"},
		{boolT, "1", []byte{1}, ""},
		{boolT, "2", nil, "more than 1"},
		{charT, "m", []byte{'m'}, ""},
		{tri, "m", u32b(2), ""},
		{tri, "y", u32b(1), ""},
		{u32, "250", u32b(250), ""},
		{u32, "0x10", u32b(16), ""},
		{u32, "y", nil, "tristate value needs"},
		{s16, "-2", []byte{0xfe, 0xff}, ""},
		{s16, "70000", nil, "does not fit"},
		{str, `"(none)"`, []byte("(none\x00"), ""},
		{str, `"ab"`, []byte("ab\x00\x00\x00\x00"), ""},
		{u32, `"ab"`, nil, "needs a char array"},
		{u32, "12x", nil, "not a number"},
	} {
		size, _ := btf.Sizeof(c.typ)
		dst := make([]byte, size)
		err := putKconfig(dst, c.typ, c.value)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s = %s: error %v, want %q", c.typ, c.value, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s = %s: %v", c.typ, c.value, err)
			continue
		}
		if s16 == c.typ && ne.Uint16([]byte{1, 0}) != 1 {
			c.want[0], c.want[1] = c.want[1], c.want[0]
		}
		if !bytes.Equal(dst, c.want) {
			t.Errorf("%s = %s: % x, want % x", c.typ, c.value, dst, c.want)
		}
	}
}

func TestKernelVersion(t *testing.T) {
	for rel, want := range map[string]uint32{
		"6.18.0-1-amd64": 6<<16 | 18<<8,
		"5.15.300":       5<<16 | 15<<8 | 255,
		"4.19":           4<<16 | 19<<8,
		"6.1.7+":         6<<16 | 1<<8 | 7,
	} {
		got, err := kernelVersion(rel)
		if err != nil || got != want {
			t.Errorf("kernelVersion(%q) = %#x, %v; want %#x", rel, got, err, want)
		}
	}
	for _, rel := range []string{"", "six", "6"} {
		if _, err := kernelVersion(rel); err == nil {
			t.Errorf("kernelVersion(%q): no error", rel)
		}
	}
}

func TestParseKernelConfig(t *testing.T) {
	cfg := "# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\nCONFIG_D=12\n"
	got, err := parseKernelConfig(strings.NewReader(cfg), []string{"CONFIG_A", "CONFIG_B", "CONFIG_C"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["CONFIG_A"] != "y" || got["CONFIG_C"] != `"x y"` {
		t.Errorf("parsed %v", got)
	}
}

// TestKconfigFeature: an object that reads .kconfig externs loads only
// with Kconfig, which its skeleton passes to ParseObject; without it, the
// load fails before the kernel with an error that says so, and with it the
// externs have their support.
func TestKconfigFeature(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "skeltest", "tracing", "tracing_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	saved := kconfigSupport.Swap(nil)
	defer kconfigSupport.Store(saved)
	spec, err := ParseObject(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKernelOnly(spec, nil); err == nil || !strings.Contains(err.Error(), "bridge.Kconfig") {
		t.Fatalf("load without Kconfig: %v, want an error naming bridge.Kconfig", err)
	}
	if _, err := ParseObject(data, Kconfig); err != nil {
		t.Fatal(err)
	}
	if kc, err := kconfigOf(spec); kc == nil || err != nil {
		t.Fatalf("after ParseObject with Kconfig: %v, %v", kc, err)
	}
}
