package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// handler is the Go callback field of Serve's handlers for one typed ring
// buffer or perf event array.
type handler struct {
	m     *mapInfo
	field string
	rec   jen.Code // the record's Go type
}

// handlers are the typed streams' callbacks, in map order; fields taken
// are the handlers struct's own fields.
func (s *skeleton) handlers() []handler {
	taken := names{"Signals": true, "OnStart": true, "OnLost": true}
	var hs []handler
	for _, m := range s.maps {
		if (m.typ.name != "RingBuf" && m.typ.name != "PerfEventArray") || len(m.typ.params) != 1 {
			continue
		}
		hs = append(hs, handler{m: m, field: taken.take("On"+m.field, "Records"), rec: m.typ.params[0]})
	}
	return hs
}

// serveDecls declares the handlers struct and Serve: the one call that
// runs the object as a tool. The machinery is bridge.Tool's; Serve only
// registers what it attaches and the typed callbacks.
func (s *skeleton) serveDecls(f *jen.File, id skelIDs) {
	hs := s.handlers()
	handlersT := id.p + "Handlers"
	fields := []jen.Code{
		gocomment.Comment("Signals stops the tool on SIGINT and SIGTERM too."),
		jen.Id("Signals").Bool(),
		gocomment.Comment("OnStart is called once the programs are attached and the begin hook has run, before any record is read."),
		jen.Id("OnStart").Func().Params(),
		gocomment.Comment("OnLost receives the count of each notice of samples the kernel lost on a perf event array, with the map's C name."),
		jen.Id("OnLost").Func().Params(jen.Id("stream").String(), jen.Id("n").Uint64()),
	}
	for _, h := range hs {
		fields = append(fields,
			gocomment.Comment(fmt.Sprintf("%s receives each record of %s that its record hook (SEC(\"ubpf/record/%s\")) passes, or every record when it has none; it runs on Serve's goroutine, never beside a hook. The record it points to is reused for the next one: copy what you keep.", h.field, h.m.name, h.m.name)),
			jen.Id(h.field).Func().Params(jen.Op("*").Add(h.rec)))
	}
	f.Add(gocomment.Commentf("%s are the Go side of Serve: the typed callbacks of the ring buffers and perf event arrays, and how the tool stops.", handlersT))
	f.Type().Id(handlersT).Struct(fields...)

	var autos []*progInfo
	for _, pi := range s.programs {
		if pi.kind.Auto {
			autos = append(autos, pi)
		}
	}
	f.Add(gocomment.Comment("Serve runs the object as a tool: it attaches the programs AttachAll attaches, runs the user program of SEC(\"ubpf/begin\"), reads the ring buffers and perf event arrays that have a record hook or a callback in h and passes each record to its hook then its callback, runs the ubpf/interval/<duration> hooks, and, when ctx ends or a hook fails or calls skelgen_stop (or, with h.Signals, on SIGINT or SIGTERM), detaches, delivers the records already written, runs ubpf/end and closes the objects. It returns the first error; a stop with a non-zero exit code is a *" + id.p + "ExitError. h may be nil."))
	f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("Serve").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Op("*").Id(handlersT)).Error().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("h").Op("==").Nil()).Block(jen.Id("h").Op("=").Op("&").Id(handlersT).Values())
		g.Id("t").Op(":=").Qual(s.bridge, "NewTool").Call(jen.Id("o").Dot("set"))
		g.List(jen.Id("t").Dot("Signals"), jen.Id("t").Dot("Started"), jen.Id("t").Dot("Lost")).Op("=").List(jen.Id("h").Dot("Signals"), jen.Id("h").Dot("OnStart"), jen.Id("h").Dot("OnLost"))
		for _, pi := range autos {
			g.If(jen.Id("o").Dot(pi.field).Op("!=").Nil()).Block(
				jen.Id("t").Dot("Program").Call(jen.Lit(pi.name), jen.Id("o").Dot(pi.field).Dot("Attach")))
		}
		for _, h := range hs {
			g.Qual(s.bridge, "Handle").Call(jen.Id("t"), jen.Id("o").Dot(h.m.field), jen.Id("h").Dot(h.field))
		}
		g.Return(jen.Id("t").Dot("Serve").Call(jen.Id("ctx")))
	})
}
