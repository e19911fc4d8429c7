package bridge

import (
	"strings"

	"github.com/cilium/ebpf"
)

// bpfFSleepable is BPF_F_SLEEPABLE, a program flag of linux/bpf.h.
const bpfFSleepable = 1 << 4

// The attach types of libbpf's tracing-multi sections (linux/bpf.h, after
// BPF_TRACE_FSESSION), which cilium/ebpf v0.22 does not name.
const (
	AttachTraceFEntryMulti   ebpf.AttachType = 59
	AttachTraceFExitMulti    ebpf.AttachType = 60
	AttachTraceFSessionMulti ebpf.AttachType = 61
)

// newSectionDefs are the section kinds of libbpf's section_defs that
// cilium/ebpf v0.22 does not know (it leaves their programs of
// UnspecifiedProgram type): as in libbpf, each is the kind alone or
// followed by /, and a .s kind loads its program sleepable.
var newSectionDefs = []struct {
	kind   string
	typ    ebpf.ProgramType
	attach ebpf.AttachType
	// attachTo: the rest of the section names the program's target, as
	// for the kinds cilium/ebpf knows; a tracing-multi pattern does not
	// (libbpf loads those programs without a target).
	attachTo bool
}{
	{"tracepoint.s", ebpf.TracePoint, ebpf.AttachNone, true},
	{"tp.s", ebpf.TracePoint, ebpf.AttachNone, true},
	{"raw_tracepoint.s", ebpf.RawTracepoint, ebpf.AttachNone, true},
	{"raw_tp.s", ebpf.RawTracepoint, ebpf.AttachNone, true},
	{"tp_btf.s", ebpf.Tracing, ebpf.AttachTraceRawTp, true},
	{"fentry.multi", ebpf.Tracing, AttachTraceFEntryMulti, false},
	{"fentry.multi.s", ebpf.Tracing, AttachTraceFEntryMulti, false},
	{"fexit.multi", ebpf.Tracing, AttachTraceFExitMulti, false},
	{"fexit.multi.s", ebpf.Tracing, AttachTraceFExitMulti, false},
	{"fsession.multi", ebpf.Tracing, AttachTraceFSessionMulti, false},
	{"fsession.multi.s", ebpf.Tracing, AttachTraceFSessionMulti, false},
}

// typeNewSection gives p, when cilium/ebpf left its type unspecified and
// its section is one of newSectionDefs, the type, attach type, target and
// flags libbpf gives it.
func typeNewSection(p *ebpf.ProgramSpec) {
	if p.Type != ebpf.UnspecifiedProgram {
		return
	}
	kind, rest, _ := strings.Cut(strings.TrimPrefix(p.SectionName, "?"), "/")
	for _, d := range newSectionDefs {
		if d.kind != kind {
			continue
		}
		p.Type, p.AttachType = d.typ, d.attach
		if d.attachTo {
			p.AttachTo = rest
		}
		if strings.HasSuffix(kind, ".s") {
			p.Flags |= bpfFSleepable
		}
		return
	}
}
