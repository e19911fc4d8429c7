package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/gen/aot"
	"github.com/skelgen/skelgen/internal/gocomment"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// userProg is a ubpf/ program in the skeleton.
type userProg struct {
	name  string
	field string
	spec  *ebpf.ProgramSpec
	ctx   jen.Code // Go type of the context struct, or struct{}
	// buffer: the program takes (data, len) in ubpf's convention and
	// runs over a []byte.
	buffer bool
	// translation is the program translated to Go (nil without -aot), and
	// translationFn the generated function returning it.
	translation   jen.Code
	translationFn string
}

// hostFunc is an extern (__ksym) function that user programs call and the
// host implements: a method of the generated host interface.
type hostFunc struct {
	name   string // C name
	method string
	proto  *btf.FuncProto
	params []hostParam
	signed bool
	size   uint32
	resTyp jen.Code
}

// hostParam is one parameter of a host function and how its register
// becomes a Go value.
type hostParam struct {
	name string
	typ  jen.Code
	kind paramKind
	elem jen.Code // for pointer kinds: the pointee's Go type
}

type paramKind int

const (
	paramInt      paramKind = iota // sized integer, bool or enum
	paramString                    // const char *
	paramInPtr                     // const T *: copied in
	paramInOutPtr                  // T *: copied in and back
	paramPointer                   // void * or a pointer to an unsized type
)

// collectUser finds the ubpf/ programs and their host functions; fields
// are the Go names of all programs.
func (s *skeleton) collectUser(fields map[string]string) error {
	spec := s.obj.Spec
	// Hook sections are checked here, so that a bad one fails go
	// generate rather than Serve.
	if _, err := bridge.Hooks(spec); err != nil {
		return err
	}
	externs := map[string]bool{}
	for _, name := range sortedNames(spec.Programs) {
		p := spec.Programs[name]
		if !bridge.IsUserProgram(p) {
			continue
		}
		up := &userProg{name: name, spec: p, ctx: jen.Struct()}
		up.field = fields[name]
		if isBufferProgram(p) {
			up.buffer = true
		} else if ctx := contextType(p); ctx != nil {
			code, err := s.types.GoType(ctx)
			if err != nil {
				return fmt.Errorf("user program %q: context: %w", name, err)
			}
			up.ctx = code
		}
		if s.cfg.AOT && !(s.cfg.InterpretHooks && runsRarely(p)) {
			if err := s.translate(up); err != nil {
				return fmt.Errorf("user program %q: translation: %w", name, err)
			}
		}
		s.user = append(s.user, up)
		for _, ins := range p.Instructions {
			if ins.IsKfuncCall() && ins.Reference() != "" && !bridge.IsBuiltin(ins.Reference()) {
				externs[ins.Reference()] = true
			}
		}
	}
	externNames := make([]string, 0, len(externs))
	for n := range externs {
		externNames = append(externNames, n)
	}
	sort.Strings(externNames)
	methods := names{}
	for _, n := range externNames {
		hf, err := s.hostFunc(n, methods)
		if err != nil {
			return fmt.Errorf("host function %s: %w", n, err)
		}
		s.host = append(s.host, hf)
	}
	return nil
}

// runsRarely reports whether p is a hook that runs once or on a timer
// (begin, end, interval) or on a notice of lost samples: translating it
// costs every build of the package compile time and saves next to
// nothing at run time.
func runsRarely(p *ebpf.ProgramSpec) bool {
	h, err := bridge.ParseHook(p.SectionName)
	if err != nil {
		return false
	}
	switch h.Kind {
	case bridge.HookBegin, bridge.HookEnd, bridge.HookInterval, bridge.HookLost:
		return true
	}
	return false
}

// typ is the Go type of the program's field in the objects.
func (up *userProg) typ(bridgePkg string) jen.Code {
	if up.buffer {
		return jen.Op("*").Qual(bridgePkg, "BufferProgram")
	}
	return jen.Op("*").Qual(bridgePkg, "UserProgram").Types(up.ctx)
}

// ctor is the function that makes the field from the loaded set.
func (up *userProg) ctor(bridgePkg string) jen.Code {
	if up.buffer {
		return jen.Qual(bridgePkg, "NewBufferProgram")
	}
	return jen.Qual(bridgePkg, "NewUserProgram").Types(up.ctx)
}

// isBufferProgram reports whether p's prototype is ubpf's (T *data,
// integer len) with a byte-sized integer or void as T.
func isBufferProgram(p *ebpf.ProgramSpec) bool {
	proto := programProto(p)
	if proto == nil || len(proto.Params) != 2 {
		return false
	}
	ptr, ok := btf.UnderlyingType(proto.Params[0].Type).(*btf.Pointer)
	if !ok {
		return false
	}
	switch t := btf.UnderlyingType(ptr.Target).(type) {
	case *btf.Void:
	case *btf.Int:
		if t.Size != 1 {
			return false
		}
	default:
		return false
	}
	_, ok = btf.UnderlyingType(proto.Params[1].Type).(*btf.Int)
	return ok
}

// programProto is the BTF prototype of p's entry function, or nil.
func programProto(p *ebpf.ProgramSpec) *btf.FuncProto {
	if len(p.Instructions) == 0 {
		return nil
	}
	fn := btf.FuncMetadata(&p.Instructions[0])
	if fn == nil {
		return nil
	}
	proto, _ := fn.Type.(*btf.FuncProto)
	return proto
}

// contextType is the struct a program's first argument points to, or nil.
func contextType(p *ebpf.ProgramSpec) btf.Type {
	proto := programProto(p)
	if proto == nil || len(proto.Params) == 0 {
		return nil
	}
	ptr, ok := btf.UnderlyingType(proto.Params[0].Type).(*btf.Pointer)
	if !ok {
		return nil
	}
	switch btf.UnderlyingType(ptr.Target).(type) {
	case *btf.Struct, *btf.Union:
		return btf.QualifiedType(ptr.Target)
	}
	return nil
}

func (s *skeleton) hostFunc(name string, methods names) (*hostFunc, error) {
	var fn *btf.Func
	if err := s.obj.Spec.Types.TypeByName(name, &fn); err != nil {
		return nil, fmt.Errorf("no BTF prototype: %w", err)
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("BTF type %v is not a prototype", fn.Type)
	}
	if len(proto.Params) > 5 {
		return nil, fmt.Errorf("%d parameters: BPF passes at most 5", len(proto.Params))
	}
	hf := &hostFunc{name: name, method: methods.take(GoName(name), "Func"), proto: proto}
	pnames := names{}
	srcNames := s.cfg.ExternParams[name]
	if len(srcNames) != len(proto.Params) {
		srcNames = nil
	}
	for i, p := range proto.Params {
		cname := p.Name
		if cname == "" && srcNames != nil {
			// clang writes no parameter names into the BTF of extern
			// declarations: take them from the source's.
			cname = srcNames[i]
		}
		pname := lowerFirst(GoName(cname))
		if cname == "" || !token.IsIdentifier(pname) || token.IsKeyword(pname) {
			pname = fmt.Sprintf("arg%d", i)
		}
		hp := hostParam{name: pnames.take(pname, "")}
		if err := s.describeParam(&hp, p.Type); err != nil {
			return nil, fmt.Errorf("parameter %d (%s): %w", i, p.Name, err)
		}
		hf.params = append(hf.params, hp)
	}
	if _, void := proto.Return.(*btf.Void); !void && proto.Return != nil {
		size, signed, err := intShape(proto.Return)
		if err != nil {
			return nil, fmt.Errorf("return type: %w", err)
		}
		code, err := s.types.GoType(proto.Return)
		if err != nil {
			return nil, fmt.Errorf("return type: %w", err)
		}
		hf.size, hf.signed, hf.resTyp = size, signed, code
	}
	return hf, nil
}

// intShape describes an integer-like type (int, bool, enum) by size and
// signedness.
func intShape(t btf.Type) (uint32, bool, error) {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		return u.Size, u.Encoding == btf.Signed, nil
	case *btf.Enum:
		return u.Size, u.Signed, nil
	}
	return 0, false, fmt.Errorf("%v is not an integer, bool or enum (pass structs by pointer)", t)
}

func (s *skeleton) describeParam(hp *hostParam, t btf.Type) error {
	if ptr, ok := btf.UnderlyingType(t).(*btf.Pointer); ok {
		target := ptr.Target
		isConst := false
		for {
			switch q := target.(type) {
			case *btf.Const:
				isConst = true
				target = q.Type
				continue
			case *btf.Volatile:
				target = q.Type
				continue
			case *btf.Restrict:
				target = q.Type
				continue
			case *btf.Typedef:
				target = q.Type
				continue
			}
			break
		}
		if i, ok := target.(*btf.Int); ok && i.Size == 1 && isConst && (i.Encoding == btf.Char || i.Encoding == btf.Signed || i.Name == "char") {
			hp.kind, hp.typ = paramString, jen.String()
			return nil
		}
		if _, err := btf.Sizeof(target); err == nil {
			if _, void := target.(*btf.Void); !void {
				code, err := s.types.GoType(target)
				if err == nil {
					hp.elem = code
					hp.typ = jen.Op("*").Add(code)
					hp.kind = paramInOutPtr
					if isConst {
						hp.kind = paramInPtr
					}
					return nil
				}
			}
		}
		hp.kind, hp.typ = paramPointer, jen.Id(s.prefix+"Pointer")
		return nil
	}
	if _, _, err := intShape(t); err != nil {
		return err
	}
	code, err := s.types.GoType(t)
	if err != nil {
		return err
	}
	hp.kind, hp.typ = paramInt, code
	return nil
}

// hostDecls writes the host interface and the function binding it to the
// runtime's externs.
func (s *skeleton) hostDecls(f *jen.File, hostT, bindFn string) {
	var methods []jen.Code
	for _, hf := range s.host {
		var params []jen.Code
		for _, p := range hf.params {
			params = append(params, jen.Id(p.name).Add(p.typ))
		}
		m := gocomment.Comment(fmt.Sprintf("%s implements extern %s.", hf.method, hf.name)).Line().Id(hf.method).Params(params...)
		if hf.resTyp != nil {
			m = m.Add(hf.resTyp)
		}
		methods = append(methods, m)
	}
	f.Add(gocomment.Commentf("%s is implemented by the Go host: the extern (__ksym) functions that the object's user-space programs call. Pointer arguments are bounds-checked copies of program memory, written back after the call unless const.", hostT))
	f.Type().Id(hostT).Interface(methods...)

	rt := s.runtimeImport()
	f.Func().Id(bindFn).Params(jen.Id("host").Id(hostT)).Map(jen.String()).Qual(rt, "Func").BlockFunc(func(g *jen.Group) {
		dict := jen.Dict{}
		for _, hf := range s.host {
			dict[jen.Lit(hf.name)] = jen.Func().Params(
				jen.Id("m").Op("*").Qual(rt, "Machine"),
				jen.List(jen.Id("r1"), jen.Id("r2"), jen.Id("r3"), jen.Id("r4"), jen.Id("r5")).Uint64(),
			).Params(jen.Uint64(), jen.Error()).BlockFunc(func(b *jen.Group) {
				s.hostBody(b, hf)
			})
		}
		g.Return(jen.Map(jen.String()).Qual(rt, "Func").Values(dict))
	})
}

func (s *skeleton) hostBody(b *jen.Group, hf *hostFunc) {
	regs := []string{"r1", "r2", "r3", "r4", "r5"}
	var args []jen.Code
	var writeBack []jen.Code
	for i, p := range hf.params {
		r := jen.Id(regs[i])
		switch p.kind {
		case paramInt:
			if isBoolCode(p.typ) {
				args = append(args, r.Clone().Op("!=").Lit(0))
			} else {
				args = append(args, jen.Add(p.typ).Call(r))
			}
		case paramString:
			b.List(jen.Id(p.name), jen.Err()).Op(":=").Qual(s.bridge, "String").Call(jen.Id("m"), r)
			b.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err()))
			args = append(args, jen.Id(p.name))
		case paramInPtr, paramInOutPtr:
			b.List(jen.Id(p.name), jen.Err()).Op(":=").Qual(s.bridge, "CopyIn").Types(p.elem).Call(jen.Id("m"), r)
			b.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err()))
			args = append(args, jen.Id(p.name))
			if p.kind == paramInOutPtr {
				writeBack = append(writeBack, jen.If(jen.Err().Op(":=").Qual(s.bridge, "CopyOut").Call(jen.Id("m"), r, jen.Id(p.name)), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())))
			}
		case paramPointer:
			args = append(args, jen.Qual(s.bridge, "Pointer").Values(jen.Dict{jen.Id("Machine"): jen.Id("m"), jen.Id("Addr"): r}))
		}
	}
	call := jen.Id("host").Dot(hf.method).Call(args...)
	if hf.resTyp == nil {
		b.Add(call)
		for _, w := range writeBack {
			b.Add(w)
		}
		b.Return(jen.Lit(0), jen.Nil())
		return
	}
	b.Id("ret").Op(":=").Add(call)
	for _, w := range writeBack {
		b.Add(w)
	}
	switch {
	case isBoolCode(hf.resTyp):
		b.If(jen.Id("ret")).Block(jen.Return(jen.Lit(1), jen.Nil()))
		b.Return(jen.Lit(0), jen.Nil())
	case hf.signed:
		b.Return(jen.Uint64().Call(jen.Int64().Call(jen.Id("ret"))), jen.Nil())
	default:
		b.Return(jen.Uint64().Call(jen.Id("ret")), jen.Nil())
	}
}

func isBoolCode(c jen.Code) bool {
	return fmt.Sprintf("%#v", c) == "bool"
}

// runtimeImport is the import path of the runtime package matching the
// bridge the skeleton uses.
func (s *skeleton) runtimeImport() string {
	return s.cfg.RuntimeImport
}

// translate translates a user program to Go, with the .bpf.c line of each
// instruction from BTF line info in the comments.
func (s *skeleton) translate(up *userProg) error {
	rs, err := bridge.TranslationSpec(s.obj.Spec, up.name)
	if err != nil {
		return err
	}
	lines := map[int]string{}
	slot := 0
	for _, ins := range up.spec.Instructions {
		if l, ok := ins.Source().(*btf.Line); ok && l != nil {
			lines[slot] = fmt.Sprintf("%s:%d: %s", filepath.Base(l.FileName()), l.LineNumber(), strings.TrimSpace(l.Line()))
		}
		slot += int(ins.Size() / asm.InstructionSize)
	}
	// The field's name, unique among the programs: x and __x are X and
	// X__, and their translations' identifiers differ too.
	name := lowerFirst(s.prefix) + up.field
	code, err := aot.Translate(rs, aot.Options{Name: name, Lines: lines, RuntimePath: s.cfg.RuntimeImport, Note: s.cfg.Warn})
	if err != nil {
		return err
	}
	up.translation, up.translationFn = code, name+"Translation"
	return nil
}

// reKsymDecl matches an extern function declaration marked __ksym in
// source blanked by blankNonCode: the function's name and its parameters.
var reKsymDecl = regexp.MustCompile(`\bextern\s[^;{}()]*?\b(\w+)\s*\(([^()]*)\)\s*__ksym\s*;`)

// externParamNames returns the parameter names of the extern (__ksym)
// function declarations of a C source, by function: clang leaves them out
// of the object's BTF. A parameter without a name is "".
func externParamNames(src []byte) map[string][]string {
	text, _ := blankNonCode(string(src))
	out := map[string][]string{}
	for _, m := range reKsymDecl.FindAllStringSubmatch(text, -1) {
		params := strings.TrimSpace(m[2])
		if params == "" || params == "void" {
			out[m[1]] = []string{}
			continue
		}
		var ns []string
		for _, p := range strings.Split(params, ",") {
			p = strings.TrimSpace(p)
			if i := strings.IndexByte(p, '['); i >= 0 {
				p = strings.TrimSpace(p[:i])
			}
			id := reIdentEnd.FindStringSubmatch(p)
			// A lone type ("__u64", "const char *") names no parameter.
			if id == nil || len(strings.Fields(strings.NewReplacer("*", " * ").Replace(p))) < 2 || strings.HasSuffix(p, "*") || isCTypeWord(id[1]) {
				ns = append(ns, "")
				continue
			}
			ns = append(ns, id[1])
		}
		out[m[1]] = ns
	}
	return out
}

// isCTypeWord reports whether w is a C keyword that ends a type, so that a
// parameter ending in it has no name ("unsigned int").
func isCTypeWord(w string) bool {
	switch w {
	case "int", "long", "short", "char", "unsigned", "signed", "void", "const", "volatile", "_Bool", "float", "double":
		return true
	}
	return false
}
