package gen

import (
	"strings"

	"github.com/cilium/ebpf"
	"github.com/dave/jennifer/jen"
)

type progInfo struct {
	name  string // C function name
	field string // Go field name in Objects
	typ   string // Go type name
	spec  *ebpf.ProgramSpec
	// attach describes the generated Attach method; nil when the section
	// name says nothing about where the program attaches.
	attach *attachInfo
}

// attachInfo is the Attach method of one program.
type attachInfo struct {
	doc    string
	params []jen.Code
	// call is the body's call on the embedded bridge.Program.
	call jen.Code
	// linkless is true for attach kinds that return only an error.
	linkless bool
	// auto is true when Attach takes no arguments, so AttachAll can call it.
	auto bool
}

// attachFor derives a program's Attach method from its section name, as
// libbpf does. Programs that attach to something only the caller knows
// (an interface, a socket, a cgroup, a binary) take it as an argument.
func attachFor(p *ebpf.ProgramSpec) *attachInfo {
	sec := p.SectionName
	kind, rest, _ := strings.Cut(sec, "/")
	p0 := jen.Id("p")
	switch kind {
	case "tracepoint", "tp":
		group, name, ok := strings.Cut(rest, "/")
		if !ok || group == "" || name == "" {
			return nil
		}
		return &attachInfo{
			doc:  "attaches the program to tracepoint " + rest + ".",
			call: p0.Clone().Dot("AttachTracepoint").Call(jen.Lit(group), jen.Lit(name)),
			auto: true,
		}
	case "raw_tp", "raw_tracepoint", "raw_tp.w", "raw_tracepoint.w":
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program to the raw tracepoint name.",
				params: []jen.Code{jen.Id("name").String()},
				call:   p0.Clone().Dot("AttachRawTracepoint").Call(jen.Id("name")),
			}
		}
		return &attachInfo{
			doc:  "attaches the program to raw tracepoint " + rest + ".",
			call: p0.Clone().Dot("AttachRawTracepoint").Call(jen.Lit(rest)),
			auto: true,
		}
	case "tp_btf", "fentry", "fexit", "fmod_ret", "fentry.s", "fexit.s", "fmod_ret.s":
		return &attachInfo{
			doc:  "attaches the program to " + rest + " (" + kind + ").",
			call: p0.Clone().Dot("AttachTracing").Call(),
			auto: true,
		}
	case "lsm", "lsm.s":
		return &attachInfo{
			doc:  "attaches the program to LSM hook " + rest + ".",
			call: p0.Clone().Dot("AttachLSM").Call(),
			auto: true,
		}
	case "kprobe", "kretprobe":
		ret := jen.Lit(kind == "kretprobe")
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program to the kernel function symbol (" + kind + ").",
				params: []jen.Code{jen.Id("symbol").String()},
				call:   p0.Clone().Dot("AttachKprobe").Call(jen.Id("symbol"), ret),
			}
		}
		return &attachInfo{
			doc:  "attaches the program to kernel function " + rest + " (" + kind + ").",
			call: p0.Clone().Dot("AttachKprobe").Call(jen.Lit(rest), ret),
			auto: true,
		}
	case "uprobe", "uretprobe", "uprobe.s", "uretprobe.s":
		ret := jen.Lit(strings.HasPrefix(kind, "uret"))
		path, sym, ok := strings.Cut(rest, ":")
		if !ok || path == "" || sym == "" || strings.ContainsAny(sym, "+") {
			return &attachInfo{
				doc:    "attaches the program to symbol in the binary at path (" + kind + "); pid 0 means every process.",
				params: []jen.Code{jen.Id("path").String(), jen.Id("symbol").String(), jen.Id("pid").Int()},
				call:   p0.Clone().Dot("AttachUprobe").Call(jen.Id("path"), jen.Id("symbol"), ret, jen.Id("pid")),
			}
		}
		return &attachInfo{
			doc:  "attaches the program to " + sym + " in " + path + " (" + kind + ").",
			call: p0.Clone().Dot("AttachUprobe").Call(jen.Lit(path), jen.Lit(sym), ret, jen.Lit(0)),
			auto: true,
		}
	case "xdp", "xdp.frags":
		return &attachInfo{
			doc:    "attaches the program to the network interface ifindex.",
			params: []jen.Code{jen.Id("ifindex").Int()},
			call:   p0.Clone().Dot("AttachXDP").Call(jen.Id("ifindex")),
		}
	case "tcx", "tc":
		switch rest {
		case "ingress", "egress":
			return &attachInfo{
				doc:    "attaches the program to " + rest + " of the network interface ifindex (tcx).",
				params: []jen.Code{jen.Id("ifindex").Int()},
				call:   p0.Clone().Dot("AttachTCX").Call(jen.Id("ifindex"), jen.Lit(rest == "egress")),
			}
		}
		return &attachInfo{
			doc:    "attaches the program to the network interface ifindex (tcx), on egress or ingress.",
			params: []jen.Code{jen.Id("ifindex").Int(), jen.Id("egress").Bool()},
			call:   p0.Clone().Dot("AttachTCX").Call(jen.Id("ifindex"), jen.Id("egress")),
		}
	case "socket":
		return &attachInfo{
			doc:      "attaches the socket filter to conn until the socket is closed.",
			params:   []jen.Code{jen.Id("conn").Qual("syscall", "Conn")},
			call:     p0.Clone().Dot("AttachSocket").Call(jen.Id("conn")),
			linkless: true,
		}
	}
	if strings.HasPrefix(kind, "cgroup") && p.AttachType != ebpf.AttachNone {
		return &attachInfo{
			doc:    "attaches the program to the cgroup at path.",
			params: []jen.Code{jen.Id("path").String()},
			call:   p0.Clone().Dot("AttachCgroup").Call(jen.Id("path"), jen.Qual(pkgEbpf, "AttachType").Call(jen.Lit(int(p.AttachType)))),
		}
	}
	return nil
}
