package bridge

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestKprobeOffset: a section's symbol+offset is read as libbpf reads it;
// a malformed offset and a kretprobe with an offset are errors naming the
// section's text (this kernel has no kprobes to attach to).
func TestKprobeOffset(t *testing.T) {
	testenv.Kernel(t)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.Kprobe,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	p := Program{prog: prog, name: "probe", links: &Links{}}
	for _, tc := range []struct {
		symbol string
		ret    bool
		want   string
	}{
		{"do_sys_open+zz", false, `"do_sys_open+zz" is not symbol+offset`},
		{"+4", false, `"+4" is not symbol+offset`},
		{"do_sys_open+0x4", true, "a kretprobe takes no offset"},
	} {
		_, err := p.attachKprobe(tc.symbol, tc.ret)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AttachKprobe(%q, %v): %v, want %q", tc.symbol, tc.ret, err, tc.want)
		}
	}
	// A well-formed offset gets past parsing: the error, if any, is the
	// kernel's.
	if _, err := p.attachKprobe("do_sys_open+0x4", false); err != nil && strings.Contains(err.Error(), "symbol+offset") {
		t.Errorf("AttachKprobe(do_sys_open+0x4): %v", err)
	}
}
