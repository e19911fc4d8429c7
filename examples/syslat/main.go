// Command syslat prints per-system-call latency: the ten system calls with
// the most time spent in them every interval, each call slower than -slow
// as it happens, and at the end the top ten with their histograms:
//
//	sudo go run ./examples/syslat -pid 1234 -slow 10ms -interval 1s
//
// The whole tool is syslat.bpf.c: kernel programs time the calls, and the
// object's hooks, run in this process by the skeleton's Serve, aggregate,
// filter and report. Go parses flags and prints the slow calls.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" syslat.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	pid        int
	slow       time.Duration
	interval   time.Duration
	maxRecords uint64
}

func main() {
	var o options
	flag.IntVar(&o.pid, "pid", 0, "trace only this process (0: every process)")
	flag.DurationVar(&o.slow, "slow", 10*time.Millisecond, "print each call at least this slow")
	flag.DurationVar(&o.interval, "interval", time.Second, "how often to print the top 10")
	flag.Uint64Var(&o.maxRecords, "max-records", 0, "stop timing each call after this many (0: never)")
	duration := flag.Duration("duration", 0, "how long to trace (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// run serves the tool until ctx ends; ready, when not nil, is called once
// the programs are attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadSyslatSpec()
	if err != nil {
		return err
	}
	v := spec.Variables
	if err := errors.Join(v.TargetTgid.Set(uint32(o.pid)), v.SlowNs.Set(uint64(o.slow)),
		v.IntervalNs.Set(uint64(o.interval)), v.MaxRecords.Set(o.maxRecords)); err != nil {
		return err
	}
	objs, err := spec.Load(&SyslatLoadOptions{Output: out})
	if err != nil {
		return err
	}
	return objs.Serve(ctx, &SyslatHandlers{OnStart: ready, OnEvents: func(e *SyslatEvent) {
		fmt.Fprintf(out, "slow: %-16s %7d syscall %3d %10d us ret %d\n", e.CommString(), e.Pid, e.Id, e.LatNs/1000, e.Ret)
	}})
}
