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
// runs the object as a tool. The machinery is bridge.Tool's, which
// attaches the programs Bind bound; Serve only registers the typed
// callbacks.
func (s *skeleton) serveDecls(f *jen.File, id skelIDs) {
	hs := s.handlers()
	handlersT := id.p + "Handlers"
	fields := []jen.Code{
		gocomment.Comment("Signals stops the tool on SIGINT and SIGTERM too."),
		jen.Id("Signals").Bool(),
		gocomment.Comment("OnStart runs once the programs are attached and ubpf/begin has run."),
		jen.Id("OnStart").Func().Params(),
		gocomment.Comment("OnLost receives the samples each perf event array lost, by C name."),
		jen.Id("OnLost").Func().Params(jen.Id("stream").String(), jen.Id("n").Uint64()),
	}
	for _, h := range hs {
		fields = append(fields,
			gocomment.Comment(fmt.Sprintf("%s receives each record of %s that ubpf/record/%s passes (all without one), on Serve's goroutine; the record is reused: copy what you keep.", h.field, h.m.name, h.m.name)),
			jen.Id(h.field).Func().Params(jen.Op("*").Add(h.rec)))
	}
	f.Add(gocomment.Commentf("%s are Serve's typed record callbacks and how the tool stops.", handlersT))
	f.Type().Id(handlersT).Struct(fields...)

	doc := "Serve runs the object as a tool until ctx ends, a hook stops it or, with h.Signals, SIGINT or SIGTERM comes: it attaches what AttachAll attaches, passes each record to its hook then to its callback in h (h may be nil) and closes the objects (see bridge.Tool.Serve). It returns the first error"
	if len(s.user) > 0 {
		doc += "; a stop with a non-zero exit code is a *" + id.p + "ExitError"
	}
	f.Add(gocomment.Comment(doc + "."))
	f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("Serve").Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("h").Op("*").Id(handlersT)).Error().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("h").Op("==").Nil()).Block(jen.Id("h").Op("=").Op("&").Id(handlersT).Values())
		g.Id("t").Op(":=").Qual(s.bridge, "NewTool").Call(jen.Id("o").Dot("set"))
		g.List(jen.Id("t").Dot("Signals"), jen.Id("t").Dot("Started"), jen.Id("t").Dot("Lost")).Op("=").List(jen.Id("h").Dot("Signals"), jen.Id("h").Dot("OnStart"), jen.Id("h").Dot("OnLost"))
		for _, h := range hs {
			g.Qual(s.bridge, "Handle").Call(jen.Id("t"), jen.Id("o").Dot(h.m.field), jen.Id("h").Dot(h.field))
		}
		g.Return(jen.Id("t").Dot("Serve").Call(jen.Id("ctx")))
	})
}
