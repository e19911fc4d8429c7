// Command readsize prints, every interval, a histogram of the sizes read()
// returns, with the count and mean:
//
//	sudo go run ./examples/readsize -pid 1234 -interval 1s -duration 10s
//
// The kernel program counts into maps; the report is the object's
// user-space program (SEC("ubpf/report")), run in this process by
// skelgen's runtime on the kernel's maps.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" readsize.bpf.c

import (
	"context"
	"flag"
	"fmt"
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

// run reports every interval and once more when ctx ends; ready, when not
// nil, is called once the program is attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadReadsizeSpec()
	if err != nil {
		return err
	}
	if err := spec.Variables.TargetTgid.Set(uint32(o.pid)); err != nil {
		return err
	}
	if err := spec.Variables.MinBytes.Set(o.minBytes); err != nil {
		return err
	}
	objs, err := spec.Load(&ReadsizeLoadOptions{Output: out})
	if err != nil {
		return err
	}
	defer objs.Close()
	if err := objs.AttachAll(); err != nil {
		return err
	}
	fmt.Fprintln(out, "Tracing read() sizes... Hit Ctrl-C to end.")
	if ready != nil {
		ready()
	}
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for {
		done := false
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		fmt.Fprintf(out, "\n%s\n", time.Now().Format("15:04:05"))
		var s ReadsizeSummary
		if _, err := objs.Report.Run(&s); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if s.Reads == 0 {
			fmt.Fprintln(out, "no reads in this interval")
		}
		if done {
			return nil
		}
	}
}
