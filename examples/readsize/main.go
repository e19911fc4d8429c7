// Command readsize prints, every interval, a histogram of the sizes read()
// returns, with the count and mean:
//
//	sudo go run ./examples/readsize -pid 1234 -interval 1s -duration 10s
//
// The whole tool is readsize.bpf.c: the kernel program counts into maps,
// and the object's hooks (SEC("ubpf/begin"), "ubpf/interval/100ms",
// "ubpf/end"), run in this process by the skeleton's Serve, print the
// reports from the kernel's maps.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" readsize.bpf.c

import (
	"context"
	"errors"
	"flag"
	"io"
	"log"
	"os"
	"time"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	pid      int
	minBytes uint64
	interval time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.pid, "pid", 0, "trace only this process (0: every process)")
	flag.Uint64Var(&o.minBytes, "min", 0, "leave out reads of fewer bytes")
	flag.DurationVar(&o.interval, "interval", time.Second, "how often to report")
	duration := flag.Duration("duration", 0, "how long to trace (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// run serves the tool until ctx ends; ready, when not nil, is called once
// the program is attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadReadsizeSpec()
	if err != nil {
		return err
	}
	v := spec.Variables
	if err := errors.Join(v.TargetTgid.Set(uint32(o.pid)), v.MinBytes.Set(o.minBytes), v.IntervalNs.Set(uint64(o.interval))); err != nil {
		return err
	}
	objs, err := spec.Load(&ReadsizeLoadOptions{Output: out})
	if err != nil {
		return err
	}
	return objs.Serve(ctx, &ReadsizeHandlers{OnStart: ready})
}
