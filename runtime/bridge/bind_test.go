package bridge

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// TestBind fills tagged fields by their types, walks untagged structs,
// and names the field it cannot fill.
func TestBind(t *testing.T) {
	spec := &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"counts": {Name: "counts", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		},
		Programs: map[string]*ebpf.ProgramSpec{
			"x": {Name: "x", SectionName: "xdp", Type: ebpf.XDP},
		},
	}
	var specs struct {
		Maps struct {
			Counts *MapSpec `skelgen:"counts"`
		}
		Programs struct {
			X *ProgramSpec `skelgen:"x"`
		}
		other *MapSpec
	}
	if err := BindSpec(spec, &specs); err != nil {
		t.Fatal(err)
	}
	if specs.Maps.Counts == nil || specs.Programs.X == nil || specs.other != nil {
		t.Fatalf("BindSpec left %+v", specs)
	}
	s, err := LoadKernelOnly(spec, &Options[NoHost]{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var objs struct {
		Counts    *Map[uint32, uint64] `skelgen:"counts"`
		X         *XDP                 `skelgen:"x"`
		Untouched *Map[uint32, uint64]
	}
	if err := Bind(s, &objs); err != nil {
		t.Fatal(err)
	}
	if objs.Counts == nil || objs.X == nil || objs.Untouched != nil {
		t.Fatalf("Bind left %+v", objs)
	}
	if err := objs.Counts.Put(1, 2); err != nil {
		t.Fatal(err)
	}
	var wrongSize struct {
		Counts *Map[uint32, uint32] `skelgen:"counts"`
	}
	if err := Bind(s, &wrongSize); err == nil || !strings.Contains(err.Error(), "counts") {
		t.Errorf("value of the wrong size: %v", err)
	}
	var unknown struct {
		Counts *int `skelgen:"counts"`
	}
	if err := Bind(s, &unknown); err == nil || !strings.Contains(err.Error(), "counts") {
		t.Errorf("field of no handle type: %v", err)
	}
	var missing struct {
		Gone *Map[uint32, uint64] `skelgen:"gone"`
	}
	if err := Bind(s, &missing); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("map not in the object: %v", err)
	}
	if err := Bind(s, objs); err == nil {
		t.Error("Bind into a struct value: no error")
	}
}

// TestBindRemembersAutoattached: Bind keeps, in field order, the program
// handles it set, which AttachAll attaches and NewTool registers: those
// whose sections name their attach points, not a program whose autoload
// was off nor one that names no attach point.
func TestBindRemembersAutoattached(t *testing.T) {
	spec := &ebpf.CollectionSpec{
		Programs: map[string]*ebpf.ProgramSpec{
			"tp":  {Name: "tp", SectionName: "tracepoint/syscalls/sys_enter_getppid", Type: ebpf.TracePoint},
			"x":   {Name: "x", SectionName: "xdp", Type: ebpf.XDP},
			"off": {Name: "off", SectionName: "tracepoint/syscalls/sys_enter_getpid", Type: ebpf.TracePoint},
			"kp":  {Name: "kp", SectionName: "kprobe/do_nanosleep", Type: ebpf.Kprobe},
			"any": {Name: "any", SectionName: "kprobe", Type: ebpf.Kprobe},
		},
	}
	s, err := LoadKernelOnly(spec, &Options[NoHost]{InProcess: true, Disabled: []string{"off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var objs struct {
		Kp  *Kprobe     `skelgen:"kp"`
		X   *XDP        `skelgen:"x"`
		Off *Tracepoint `skelgen:"off"`
		Any *Kprobe     `skelgen:"any"`
		Tp  *Tracepoint `skelgen:"tp"`
	}
	// Twice: a second Bind starts the list over.
	for range 2 {
		if err := Bind(s, &objs); err != nil {
			t.Fatal(err)
		}
	}
	var bound []string
	for _, a := range s.autoProgs {
		if name, _ := a.autoattach(); name != "" {
			bound = append(bound, name)
		}
	}
	if got := strings.Join(bound, " "); got != "kp tp" {
		t.Errorf("AttachAll's programs: %q, want \"kp tp\"", got)
	}
	tool := NewTool(s)
	if got := strings.Join(tool.order, " "); got != "kp tp" {
		t.Errorf("NewTool registers %q, want \"kp tp\"", got)
	}
	// Serve attaches at start what AttachAll would: not a program whose
	// autoattach is off, which stays registered for skelgen_attach.
	objs.Kp.SetAutoattach(false)
	tool.links, tool.attached = map[string]link.Link{}, map[string]bool{}
	if err := tool.attachAtStart(); err != nil {
		t.Fatal(err)
	}
	if !tool.attached["tp"] || tool.attached["kp"] || tool.attachers["kp"] == nil {
		t.Errorf("attached at start: %v, want tp alone (kp registered: %v)", tool.attached, tool.attachers["kp"] != nil)
	}
}
