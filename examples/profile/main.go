// Command profile samples the stacks running on every CPU at a frequency
// and prints the most frequent ones, as libbpf-tools' profile:
//
//	sudo go run ./examples/profile -hz 99 -duration 5s -top 10
//
// The perf_event program's Attach(hz) opens a software CPU-clock perf
// event on each CPU and attaches the program to all of them. Kernel frames
// are named from /proc/kallsyms, user frames from the ELF symbols of the
// files the process maps, while it runs.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen profile.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"time"

	"github.com/skelgen/skelgen/examples/internal/cli"
	"github.com/skelgen/skelgen/examples/internal/ksyms"
)

type options struct {
	hz   uint64
	pid  int
	idle bool
	top  int
}

func main() {
	var o options
	flag.Uint64Var(&o.hz, "hz", 99, "samples per second on each CPU")
	flag.IntVar(&o.pid, "pid", 0, "sample only this process (0: every process)")
	flag.BoolVar(&o.idle, "I", false, "include the idle task")
	flag.IntVar(&o.top, "top", 10, "stacks printed, most frequent first")
	duration := flag.Duration("duration", 5*time.Second, "how long to sample (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// sample is a stack and how often it was sampled.
type sample struct {
	pid    uint32
	comm   string
	kernel []uint64 // innermost first
	user   []uint64
	n      uint64
}

// profile samples until ctx ends and returns the stacks, most frequent
// first; ready, when not nil, is called once sampling started.
func profile(ctx context.Context, o options, ready func()) ([]sample, *users, error) {
	if o.hz == 0 {
		return nil, nil, errors.New("-hz must be positive")
	}
	spec, err := LoadProfileSpec()
	if err != nil {
		return nil, nil, err
	}
	if err := errors.Join(spec.Variables.TargetTgid.Set(uint32(o.pid)), spec.Variables.IncludeIdle.Set(o.idle)); err != nil {
		return nil, nil, err
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return nil, nil, err
	}
	defer objs.Close()
	if _, err := objs.Sample.Attach(o.hz); err != nil {
		return nil, nil, err
	}
	if ready != nil {
		ready()
	}
	<-ctx.Done()

	us := newUsers()
	var all []sample
	for k, n := range objs.Counts.All(&err) {
		s := sample{pid: k.Pid, comm: k.CommString(), n: n}
		if k.KernelStack >= 0 {
			s.kernel, _ = objs.Stacks.Lookup(uint32(k.KernelStack))
		}
		if k.UserStack >= 0 {
			s.user, _ = objs.Stacks.Lookup(uint32(k.UserStack))
			us.note(s.pid) // read the process's mappings while it may still run
		}
		all = append(all, s)
	}
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].n > all[j].n })
	return all, us, nil
}

func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	all, us, err := profile(ctx, o, ready)
	if err != nil {
		return err
	}
	syms, err := ksyms.Load()
	if err != nil {
		fmt.Fprintf(out, "# kernel symbols unavailable (%v): printing addresses\n", err)
	}
	var total uint64
	for _, s := range all {
		total += s.n
	}
	fmt.Fprintf(out, "# %d samples at %d Hz per CPU, %d distinct stacks\n", total, o.hz, len(all))
	for i, s := range all {
		if i == o.top {
			break
		}
		for _, a := range s.kernel {
			fmt.Fprintf(out, "    %s\n", syms.Name(a))
		}
		if len(s.kernel) > 0 && len(s.user) > 0 {
			fmt.Fprintln(out, "    --")
		}
		for _, a := range s.user {
			fmt.Fprintf(out, "    %s\n", us.name(s.pid, a))
		}
		fmt.Fprintf(out, "    %s [%d] %d\n\n", s.comm, s.pid, s.n)
	}
	return nil
}
