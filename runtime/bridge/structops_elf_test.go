package bridge

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// structOpsObject compiles maps, struct_ops maps of the sections named,
// into an object.
func structOpsObject(t *testing.T, sections ...string) []byte {
	t.Helper()
	clang := testenv.Clang(t)
	dir := t.TempDir()
	src := `struct ops { int (*f)(void); char name[16]; };
__attribute__((section("struct_ops"), used)) int f1(void) { return 0; }
char LICENSE[] __attribute__((section("license"), used)) = "GPL";
`
	for i, sec := range sections {
		src += `__attribute__((section("` + sec + `"), used)) struct ops m` + string(rune('a'+i)) + ` = { .f = (void *)f1, .name = "x" };` + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "s.bpf.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "s.o")
	if out, err := exec.Command(clang, "-target", "bpfel", "-O2", "-g", "-c", filepath.Join(dir, "s.bpf.c"), "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestStructOpsSection: a map of .struct_ops, which cilium/ebpf refuses,
// is read as one of .struct_ops.link, its function member linked to its
// program, and the object's bytes are left as they were.
func TestStructOpsSection(t *testing.T) {
	data := structOpsObject(t, ".struct_ops")
	before := bytes.Clone(data)
	spec, err := ParseObject(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, before) {
		t.Error("ParseObject changed the object's bytes")
	}
	m := spec.Maps["ma"]
	if m == nil || m.Type != ebpf.StructOpsMap {
		t.Fatalf("map ma: %+v", m)
	}
	if got := spec.Programs["f1"].AttachTo; got != "ops:f" {
		t.Errorf("program f1 attaches to %q, want ops:f", got)
	}
	var ds *btf.Datasec
	if err := spec.Types.TypeByName(".struct_ops.link", &ds); err != nil || len(ds.Vars) != 1 {
		t.Errorf("data section .struct_ops.link: %v", err)
	}
}

// TestStructOpsBothSections: .struct_ops and .struct_ops.link in one
// object cannot both be read as .struct_ops.link; the error says so.
func TestStructOpsBothSections(t *testing.T) {
	_, err := ParseObject(structOpsObject(t, ".struct_ops", ".struct_ops.link"))
	if err == nil || !strings.Contains(err.Error(), "put them all in .struct_ops.link") {
		t.Errorf("ParseObject: %v", err)
	}
}

// TestStructOpsHostile: an object with a .struct_ops section whose ELF
// header, section headers or .BTF header hold any byte value, or which is
// cut short, gives a spec or an error, never a panic.
func TestStructOpsHostile(t *testing.T) {
	data := structOpsObject(t, ".struct_ops")
	order := binary.LittleEndian
	shoff := order.Uint64(data[40:])
	var places []uint64
	for i := uint64(0); i < 64; i++ {
		places = append(places, i)
	}
	for i := shoff; i < uint64(len(data)); i++ {
		places = append(places, i)
	}
	if b := bytes.Index(data, []byte{0x9f, 0xeb, 1, 0}); b >= 0 {
		for i := uint64(b); i < uint64(b)+24; i++ {
			places = append(places, i)
		}
	}
	for _, at := range places {
		for _, v := range []byte{0, 0x7f, 0xff} {
			bad := bytes.Clone(data)
			bad[at] = v
			ParseObject(bad)
		}
	}
	for n := 0; n < len(data); n += 7 {
		ParseObject(data[:n])
	}
}
