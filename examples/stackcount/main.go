// Command stackcount counts the stacks that lead to a tracepoint and
// prints each with its count, most frequent last, as bcc's stackcount:
//
//	sudo go run ./examples/stackcount -tp syscalls:sys_enter_openat -P -duration 5s
//
// The stack map's depth and capacity come from -stack-depth and
// -max-stacks: the object leaves them 0 and the tool sizes the maps
// before load.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen stackcount.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/skelgen/skelgen/examples/internal/cli"
	"github.com/skelgen/skelgen/examples/internal/ksyms"
)

type options struct {
	tracepoint string // group:name
	pid        int
	perProcess bool
	user       bool
	depth      int
	maxStacks  int
}

func main() {
	var o options
	flag.StringVar(&o.tracepoint, "tp", "sched:sched_switch", "tracepoint to count stacks at, group:name")
	flag.IntVar(&o.pid, "pid", 0, "trace only this process (0: every process)")
	flag.BoolVar(&o.perProcess, "P", false, "count per process")
	flag.BoolVar(&o.user, "U", false, "also user stacks (printed as addresses)")
	flag.IntVar(&o.depth, "stack-depth", 32, "frames kept per stack (at most 127)")
	flag.IntVar(&o.maxStacks, "max-stacks", 4096, "distinct stacks kept")
	duration := flag.Duration("duration", 0, "how long to count (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// run counts until ctx ends, then prints the stacks; ready, when not nil,
// is called once the program is attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	group, name, ok := strings.Cut(o.tracepoint, ":")
	if !ok {
		return fmt.Errorf("-tp %q: want group:name", o.tracepoint)
	}
	if o.depth < 1 || o.depth > 127 || o.maxStacks < 1 {
		return errors.New("-stack-depth must be 1..127 and -max-stacks positive")
	}
	spec, err := LoadStackcountSpec()
	if err != nil {
		return err
	}
	spec.Maps.Stacks.SetValueSize(uint32(o.depth) * 8)
	spec.Maps.Stacks.SetMaxEntries(uint32(o.maxStacks))
	spec.Maps.Counts.SetMaxEntries(uint32(o.maxStacks))
	for _, set := range []error{
		spec.Variables.TargetTgid.Set(uint32(o.pid)),
		spec.Variables.PerProcess.Set(o.perProcess),
		spec.Variables.UserStacks.Set(o.user),
	} {
		if set != nil {
			return set
		}
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return err
	}
	defer objs.Close()
	if _, err := objs.CountStack.AttachTo(group, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "# counting stacks at tracepoint %s:%s: %d frames deep, up to %d stacks (stack map: value size %d, max_entries %d)\n",
		group, name, objs.Stacks.Depth(), objs.Counts.Raw().MaxEntries(), objs.Stacks.Raw().ValueSize(), objs.Stacks.Raw().MaxEntries())
	if ready != nil {
		ready()
	}
	<-ctx.Done()
	return report(out, objs)
}

type stackCount struct {
	key StackcountKey
	n   uint64
}

func report(out io.Writer, objs *StackcountObjects) error {
	var all []stackCount
	var err error
	for k, n := range objs.Counts.All(&err) {
		all = append(all, stackCount{k, n})
	}
	if err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n < all[j].n })
	syms, err := ksyms.Load()
	if err != nil {
		fmt.Fprintf(out, "# kernel symbols unavailable (%v): printing addresses\n", err)
	}
	for _, c := range all {
		if c.key.KernelStack >= 0 {
			frames, err := objs.Stacks.Lookup(uint32(c.key.KernelStack))
			if err != nil {
				fmt.Fprintf(out, "  [kernel stack lost: %v]\n", err)
			}
			for _, a := range frames {
				fmt.Fprintf(out, "  %s\n", syms.Name(a))
			}
		} else {
			fmt.Fprintf(out, "  [no kernel stack: %d]\n", c.key.KernelStack)
		}
		if c.key.UserStack >= 0 {
			frames, _ := objs.Stacks.Lookup(uint32(c.key.UserStack))
			for _, a := range frames {
				fmt.Fprintf(out, "  %#x\n", a)
			}
		}
		if c.key.Pid != 0 {
			fmt.Fprintf(out, "    %s [%d]\n", c.key.CommString(), c.key.Pid)
		}
		fmt.Fprintf(out, "    %d\n\n", c.n)
	}
	fmt.Fprintf(out, "# %d distinct stacks\n", len(all))
	return nil
}
