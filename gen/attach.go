package gen

import (
	"strconv"
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
	params []attachParam
	// method and args are the body's call on the embedded
	// bridge.Program.
	method string
	args   []attachArg
	// linkless is true for attach kinds that return only an error.
	linkless bool
	// auto is true when Attach takes no arguments, so AttachAll can call it.
	auto bool
	// open, for iterators, is the bridge.Program method behind an Open
	// method taking the same parameters, which returns a reader of the
	// iterator's output.
	open string
}

// attachParam is a parameter of an Attach method: its type is a
// predeclared one, or pkg.typ, or (pkg bridgePkg) a type of the bridge
// package the skeleton uses.
type attachParam struct {
	name, pkg, typ string
	ptr            bool // a pointer to the type
}

// bridgePkg stands for the bridge package's path in an attachParam.
const bridgePkg = "bridge"

// path is p's package path, with the bridge's path for bridgePkg.
func (p attachParam) path(bridge string) string {
	if p.pkg == bridgePkg {
		return bridge
	}
	return p.pkg
}

// attachArg is an argument of an Attach method's call: a parameter, by
// name, or else a literal (a string, bool or int), converted to
// ebpf.AttachType when attachType is set.
type attachArg struct {
	param      string
	lit        any
	attachType bool
}

func param(name string) attachArg { return attachArg{param: name} }
func lit(v any) attachArg         { return attachArg{lit: v} }

// paramCodes are the parameters as jennifer code.
func (a *attachInfo) paramCodes(bridge string) []jen.Code {
	var out []jen.Code
	for _, p := range a.params {
		if p.pkg != "" {
			id := jen.Id(p.name)
			if p.ptr {
				id = id.Op("*")
			}
			out = append(out, id.Qual(p.path(bridge), p.typ))
		} else {
			out = append(out, jen.Id(p.name).Id(p.typ))
		}
	}
	return out
}

// callCode is the call of method as jennifer code.
func (a *attachInfo) callCode(method string) jen.Code {
	args := make([]jen.Code, len(a.args))
	for i, arg := range a.args {
		switch {
		case arg.param != "":
			args[i] = jen.Id(arg.param)
		case arg.attachType:
			args[i] = jen.Qual(pkgEbpf, "AttachType").Call(jen.Lit(arg.lit))
		default:
			args[i] = jen.Lit(arg.lit)
		}
	}
	return jen.Id("p").Dot(method).Call(args...)
}

// attachParams appends the parameters of a's methods as go/format writes
// them.
func (w *vtext) attachParams(a *attachInfo, bridge string) *vtext {
	w.s("(")
	for i, p := range a.params {
		if i > 0 {
			w.s(", ")
		}
		w.s(p.name, " ")
		if p.ptr {
			w.s("*")
		}
		if p.pkg != "" {
			w.qual(p.path(bridge), p.typ)
		} else {
			w.s(p.typ)
		}
	}
	return w.s(")")
}

// attachSig appends the parameters and results of a's Attach method as
// go/format writes them.
func (w *vtext) attachSig(a *attachInfo, bridge string) *vtext {
	w.attachParams(a, bridge)
	if a.linkless {
		return w.s(" error")
	}
	return w.s(" (").qual(pkgLink, "Link").s(", error)")
}

// attachCall appends the call of method as go/format writes it.
func (w *vtext) attachCall(a *attachInfo, method string) *vtext {
	w.s("p.", method, "(")
	for i, arg := range a.args {
		if i > 0 {
			w.s(", ")
		}
		switch v := arg.lit.(type) {
		case nil:
			w.s(arg.param)
		case int:
			if arg.attachType {
				w.qual(pkgEbpf, "AttachType").s("(").num(v).s(")")
			} else {
				w.num(v)
			}
		case bool:
			w.s(strconv.FormatBool(v))
		case string:
			w.lit(v)
		}
	}
	return w.s(")")
}

// attachFor derives a program's Attach method from its section name, as
// libbpf does. Programs that attach to something only the caller knows
// (an interface, a socket, a cgroup, a binary) take it as an argument.
func attachFor(p *ebpf.ProgramSpec) *attachInfo {
	sec := p.SectionName
	kind, rest, _ := strings.Cut(sec, "/")
	switch kind {
	case "tracepoint", "tp", "tracepoint.s", "tp.s":
		group, name, ok := strings.Cut(rest, "/")
		if !ok || group == "" || name == "" {
			return &attachInfo{
				doc:    "attaches the program to the tracepoint group/name (as in /sys/kernel/tracing/events/GROUP/NAME).",
				params: []attachParam{{name: "group", typ: "string"}, {name: "name", typ: "string"}},
				method: "AttachTracepoint", args: []attachArg{param("group"), param("name")},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to tracepoint " + rest + ".",
			method: "AttachTracepoint", args: []attachArg{lit(group), lit(name)},
			auto: true,
		}
	case "raw_tp", "raw_tracepoint", "raw_tp.w", "raw_tracepoint.w", "raw_tp.s", "raw_tracepoint.s":
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program to the raw tracepoint name.",
				params: []attachParam{{name: "name", typ: "string"}},
				method: "AttachRawTracepoint", args: []attachArg{param("name")},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to raw tracepoint " + rest + ".",
			method: "AttachRawTracepoint", args: []attachArg{lit(rest)},
			auto: true,
		}
	case "tp_btf", "tp_btf.s", "fentry", "fexit", "fmod_ret", "fentry.s", "fexit.s", "fmod_ret.s", "fsession", "fsession.s":
		return &attachInfo{
			doc:    "attaches the program to " + rest + " (" + kind + ").",
			method: "AttachTracing",
			auto:   true,
		}
	case "lsm", "lsm.s":
		return &attachInfo{
			doc:    "attaches the program to LSM hook " + rest + ".",
			method: "AttachLSM",
			auto:   true,
		}
	case "kprobe", "kretprobe":
		ret := lit(kind == "kretprobe")
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program to the kernel function symbol (" + kind + ").",
				params: []attachParam{{name: "symbol", typ: "string"}},
				method: "AttachKprobe", args: []attachArg{param("symbol"), ret},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to kernel function " + rest + " (" + kind + ").",
			method: "AttachKprobe", args: []attachArg{lit(rest), ret},
			auto: true,
		}
	case "ksyscall", "kretsyscall":
		ret := lit(kind == "kretsyscall")
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program to the kernel's handler of system call name, the architecture's wrapper as libbpf resolves it (bridge.KsyscallName) (" + kind + ").",
				params: []attachParam{{name: "name", typ: "string"}},
				method: "AttachKsyscall", args: []attachArg{param("name"), ret},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to the kernel's handler of system call " + rest + ", the architecture's wrapper as libbpf resolves it (bridge.KsyscallName) (" + kind + ").",
			method: "AttachKsyscall", args: []attachArg{lit(rest), ret},
			auto: true,
		}
	case "kprobe.multi", "kretprobe.multi", "kprobe.session":
		method, args := "AttachKprobeMulti", []attachArg{param("pattern"), lit(kind == "kretprobe.multi")}
		if kind == "kprobe.session" {
			method, args = "AttachKprobeSession", args[:1]
		}
		if rest == "" {
			return &attachInfo{
				doc:    "attaches the program through one link to every traceable kernel function whose name matches pattern (* and ? as wildcards) (" + kind + ").",
				params: []attachParam{{name: "pattern", typ: "string"}},
				method: method, args: args,
			}
		}
		args[0] = lit(rest)
		return &attachInfo{
			doc:    "attaches the program through one link to every traceable kernel function matching " + rest + " (" + kind + ").",
			method: method, args: args,
			auto: true,
		}
	case "uprobe.multi", "uretprobe.multi", "uprobe.multi.s", "uretprobe.multi.s":
		ret := lit(strings.HasPrefix(kind, "uret"))
		path, pattern, ok := strings.Cut(rest, ":")
		if !ok || path == "" || pattern == "" {
			return &attachInfo{
				doc:    "attaches the program through one link to every function of the binary at path whose name matches pattern (* and ? as wildcards) (" + kind + "); pid 0 means every process.",
				params: []attachParam{{name: "path", typ: "string"}, {name: "pattern", typ: "string"}, {name: "pid", typ: "int"}},
				method: "AttachUprobeMulti", args: []attachArg{param("path"), param("pattern"), ret, param("pid")},
			}
		}
		return &attachInfo{
			doc:    "attaches the program through one link to every function of " + path + " matching " + pattern + " (" + kind + ").",
			method: "AttachUprobeMulti", args: []attachArg{lit(path), lit(pattern), ret, lit(0)},
			auto: true,
		}
	case "perf_event":
		return &attachInfo{
			doc:    "samples with the program at hz on every CPU through a software CPU-clock perf event per CPU, as profilers do; the embedded AttachPerfEvent attaches it to any perf event fd.",
			params: []attachParam{{name: "hz", typ: "uint64"}},
			method: "AttachCPUClock", args: []attachArg{param("hz")},
		}
	case "sk_msg", "sk_skb":
		if p.AttachType == ebpf.AttachNone {
			return nil
		}
		return &attachInfo{
			doc:    "attaches the program to the sockmap or sockhash m (" + sec + "), through a link (Linux 6.10 on).",
			params: []attachParam{{name: "m", pkg: pkgEbpf, typ: "Map", ptr: true}},
			method: "AttachSockMap", args: []attachArg{param("m"), {lit: int(p.AttachType), attachType: true}},
		}
	case "sk_lookup", "flow_dissector":
		return &attachInfo{
			doc:    "attaches the program to the network namespace at the path netns (/proc/self/ns/net, /run/netns/NAME).",
			params: []attachParam{{name: "netns", typ: "string"}},
			method: "AttachNetNs", args: []attachArg{param("netns")},
		}
	case "netfilter":
		return &attachInfo{
			doc:    "attaches the program to netfilter hook (NF_INET_PRE_ROUTING 0 ... NF_INET_POST_ROUTING 4) of protocol family (NFPROTO_IPV4 2, NFPROTO_IPV6 10) at priority, in the calling thread's network namespace.",
			params: []attachParam{{name: "family", typ: "uint32"}, {name: "hook", typ: "uint32"}, {name: "priority", typ: "int32"}},
			method: "AttachNetfilter", args: []attachArg{param("family"), param("hook"), param("priority")},
		}
	case "netkit":
		if rest != "primary" && rest != "peer" {
			return nil
		}
		return &attachInfo{
			doc:    "attaches the program to the " + rest + " side of the netkit device ifindex.",
			params: []attachParam{{name: "ifindex", typ: "int"}},
			method: "AttachNetkit", args: []attachArg{param("ifindex"), lit(rest == "peer")},
		}
	case "sockops", "lsm_cgroup":
		return &attachInfo{
			doc:    "attaches the program to the cgroup at path (" + kind + ").",
			params: []attachParam{{name: "path", typ: "string"}},
			method: "AttachCgroup", args: []attachArg{param("path"), {lit: int(p.AttachType), attachType: true}},
		}
	case "sk_reuseport":
		return &attachInfo{
			doc:    "attaches the program to the SO_REUSEPORT group of conn's socket; it selects the group's socket for each packet until the group is gone.",
			params: []attachParam{{name: "conn", pkg: "syscall", typ: "Conn"}},
			method: "AttachReuseport", args: []attachArg{param("conn")},
			linkless: true,
		}
	case "lirc_mode2":
		return &attachInfo{
			doc:    "attaches the program to the infrared receiver at path (/dev/lirc0); it stays attached until link.RawDetachProgram.",
			params: []attachParam{{name: "path", typ: "string"}},
			method: "AttachLircMode2", args: []attachArg{param("path")},
			linkless: true,
		}
	case "uprobe", "uretprobe", "uprobe.s", "uretprobe.s":
		ret := lit(strings.HasPrefix(kind, "uret"))
		path, sym, ok := strings.Cut(rest, ":")
		if !ok || path == "" || sym == "" || strings.ContainsAny(sym, "+") {
			return &attachInfo{
				doc:    "attaches the program to symbol in the binary at path (" + kind + "); pid 0 means every process.",
				params: []attachParam{{name: "path", typ: "string"}, {name: "symbol", typ: "string"}, {name: "pid", typ: "int"}},
				method: "AttachUprobe", args: []attachArg{param("path"), param("symbol"), ret, param("pid")},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to " + sym + " in " + path + " (" + kind + ").",
			method: "AttachUprobe", args: []attachArg{lit(path), lit(sym), ret, lit(0)},
			auto: true,
		}
	case "usdt", "usdt.s":
		// usdt/PATH:PROVIDER:NAME (PATH may hold colons).
		parts := strings.Split(rest, ":")
		if n := len(parts); n >= 3 && parts[n-1] != "" && parts[n-2] != "" && parts[0] != "" {
			path, provider, name := strings.Join(parts[:n-2], ":"), parts[n-2], parts[n-1]
			return &attachInfo{
				doc:    "attaches the program to USDT probe " + provider + ":" + name + " of " + path + ", every site of it.",
				method: "AttachUSDT", args: []attachArg{lit(path), lit(provider), lit(name), lit(0)},
				auto: true,
			}
		}
		return &attachInfo{
			doc:    "attaches the program to every site of USDT probe provider:name in the binary at path, as libbpf does (the argument specs of the binary's notes into the object's __bpf_usdt_specs map); pid 0 means every process.",
			params: []attachParam{{name: "path", typ: "string"}, {name: "provider", typ: "string"}, {name: "name", typ: "string"}, {name: "pid", typ: "int"}},
			method: "AttachUSDT", args: []attachArg{param("path"), param("provider"), param("name"), param("pid")},
		}
	case "xdp", "xdp.frags":
		if rest == "devmap" || rest == "cpumap" {
			// Run from a devmap or cpumap entry, not on an interface.
			return nil
		}
		return &attachInfo{
			doc:    "attaches the program to the network interface ifindex.",
			params: []attachParam{{name: "ifindex", typ: "int"}},
			method: "AttachXDP", args: []attachArg{param("ifindex")},
		}
	case "tcx", "tc":
		switch rest {
		case "ingress", "egress":
			return &attachInfo{
				doc:    "attaches the program to " + rest + " of the network interface ifindex (tcx).",
				params: []attachParam{{name: "ifindex", typ: "int"}},
				method: "AttachTCX", args: []attachArg{param("ifindex"), lit(rest == "egress")},
			}
		}
		return &attachInfo{
			doc:    "attaches the program to the network interface ifindex (tcx), on egress or ingress.",
			params: []attachParam{{name: "ifindex", typ: "int"}, {name: "egress", typ: "bool"}},
			method: "AttachTCX", args: []attachArg{param("ifindex"), param("egress")},
		}
	case "iter", "iter.s":
		return iterFor(rest)
	case "socket":
		return &attachInfo{
			doc:    "attaches the socket filter to conn until the socket is closed.",
			params: []attachParam{{name: "conn", pkg: "syscall", typ: "Conn"}},
			method: "AttachSocket", args: []attachArg{param("conn")},
			linkless: true,
		}
	}
	// cgroup_skb/ingress's attach type, BPF_CGROUP_INET_INGRESS, is 0, as
	// AttachNone.
	if strings.HasPrefix(kind, "cgroup") && (p.AttachType != ebpf.AttachNone || sec == "cgroup_skb/ingress") {
		return &attachInfo{
			doc:    "attaches the program to the cgroup at path.",
			params: []attachParam{{name: "path", typ: "string"}},
			method: "AttachCgroup", args: []attachArg{param("path"), {lit: int(p.AttachType), attachType: true}},
		}
	}
	return nil
}

// openDoc is the doc comment of an iterator's Open method.
const openDoc = "Open attaches the iterator as Attach does and returns a reader of its output: each Read runs the program over the next elements, until io.EOF. Closing the reader detaches the iterator."

// iterFor is the Attach (and Open) of an iterator of kind: task
// iterators take the tasks to walk, map element iterators their map,
// cgroup iterators where to start; the others take nothing.
func iterFor(kind string) *attachInfo {
	var arg *attachParam
	var what, suffix string
	switch kind {
	case "":
		return nil
	case "task", "task_file", "task_vma":
		arg, what, suffix = &attachParam{name: "task", pkg: bridgePkg, typ: "IterTask"}, "over the tasks task selects (the zero value: all of them)", "Task"
	case "bpf_map_elem", "bpf_sk_storage_map", "sockmap":
		arg, what, suffix = &attachParam{name: "m", pkg: bridgePkg, typ: "IterMap"}, "over the elements of map m", "Map"
	case "cgroup":
		arg, what, suffix = &attachParam{name: "cgroup", pkg: bridgePkg, typ: "IterCgroup"}, "from the cgroup cgroup selects", "Cgroup"
	}
	a := &attachInfo{
		doc:    "attaches the program as iterator " + kind,
		method: "AttachIter" + suffix,
		open:   "OpenIter" + suffix,
	}
	if arg != nil {
		a.doc += " " + what
		a.params = []attachParam{*arg}
		a.args = []attachArg{param(arg.name)}
	} else {
		a.auto = true
	}
	a.doc += ": a link that can be pinned; Open reads the output."
	return a
}

// noAttachWhy is the reason a program whose section gives it no Attach
// has none, for its type's doc comment.
func noAttachWhy(p *ebpf.ProgramSpec) string {
	kind, rest, _ := strings.Cut(p.SectionName, "/")
	switch kind {
	case "xdp", "xdp.frags":
		return "it runs from the entries of a " + rest + " that hold its file descriptor (Raw().FD()), not on an interface."
	case "cgroup":
		if rest == "skb" {
			return "the section names no direction: cgroup_skb/ingress and cgroup_skb/egress do."
		}
	case "sk_skb":
		return "the section names no attach type: sk_skb/stream_parser, sk_skb/stream_verdict and sk_skb/verdict do."
	case "classifier", "action":
		return "legacy tc programs are attached as a qdisc's filter through netlink, which skeletons do not speak; tcx/ingress and tcx/egress attach through links."
	case "lwt_in", "lwt_out", "lwt_xmit", "lwt_seg6local":
		return "lightweight tunnel programs are attached to a route (ip route ... encap bpf) through netlink, which skeletons do not speak."
	case "syscall":
		return "syscall programs are run (Raw().Run), not attached."
	case "struct_ops", "struct_ops.s":
		return "it is a function member of a struct_ops map, registered with the map's Attach."
	case "freplace":
		return "an extension replaces a function of another program, given as the spec's AttachTarget before load; link.AttachFreplace attaches it."
	case "fentry.multi", "fentry.multi.s", "fexit.multi", "fexit.multi.s", "fsession.multi", "fsession.multi.s":
		return "cilium/ebpf v0.22, which attaches the skeleton's programs, has no tracing-multi link (the kernel's link of one program to every kernel function whose BTF matches a pattern)."
	case "uprobe.session", "uprobe.session.s":
		return "cilium/ebpf v0.22, which attaches the skeleton's programs, has no uprobe session link."
	case "iter", "iter.s":
		return "the section names no iterator kind."
	case "netkit":
		return "the section names neither side: netkit/primary and netkit/peer do."
	}
	return "skelgen knows no attach point for section " + p.SectionName + "."
}
