// Command opensnoop prints every file open: process, file descriptor or
// error, and path.
//
// It prefers one fexit program on do_sys_openat2, which sees the
// arguments and the result at once. Kernels that refuse BPF trampolines
// (fentry/fexit) get the tracepoint pair syscalls/sys_enter_openat and
// sys_exit_openat instead: the tool switches the programs it does not
// want off before load (autoload), and says which it uses.
//
//	sudo go run ./examples/opensnoop -pid 1234 -duration 10s
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" opensnoop.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	pid        int
	failedOnly bool
	name       string
	timestamp  bool
	tracepoint bool
}

func main() {
	var o options
	flag.IntVar(&o.pid, "pid", 0, "trace only this process (0: every process)")
	flag.BoolVar(&o.failedOnly, "x", false, "only failed opens")
	flag.StringVar(&o.name, "name", "", "only commands whose name contains this")
	flag.BoolVar(&o.timestamp, "T", false, "print a timestamp column")
	flag.BoolVar(&o.tracepoint, "tracepoint", false, "use the tracepoints even where fexit works")
	duration := flag.Duration("duration", 0, "how long to trace (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// load loads the fexit program, or where the kernel refuses it the
// tracepoints, and says which.
func load(spec *OpensnoopSpec, forceTracepoint bool) (*OpensnoopObjects, string, error) {
	tracepoints := func(on bool) {
		spec.Programs.EnterOpenat.SetAutoload(on)
		spec.Programs.ExitOpenat.SetAutoload(on)
		spec.Programs.FexitOpenat2.SetAutoload(!on)
	}
	if !forceTracepoint {
		tracepoints(false)
		objs, err := spec.Load(nil)
		if err == nil {
			return objs, "fexit/do_sys_openat2", nil
		}
		if !errors.Is(err, os.ErrPermission) && !errors.Is(err, ebpf.ErrNotSupported) {
			return nil, "", err
		}
		tracepoints(true)
		objs, err = spec.Load(nil)
		return objs, "tracepoints syscalls/sys_{enter,exit}_openat (the kernel refused fexit/do_sys_openat2)", err
	}
	tracepoints(true)
	objs, err := spec.Load(nil)
	return objs, "tracepoints syscalls/sys_{enter,exit}_openat (-tracepoint)", err
}

// run traces until ctx ends; ready, when not nil, is called once the
// programs are attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadOpensnoopSpec()
	if err != nil {
		return err
	}
	if err := spec.Variables.TargetTgid.Set(uint32(o.pid)); err != nil {
		return err
	}
	if err := spec.Variables.FailedOnly.Set(o.failedOnly); err != nil {
		return err
	}
	objs, how, err := load(spec, o.tracepoint)
	if err != nil {
		return err
	}
	defer objs.Close()
	if err := objs.AttachAll(); err != nil {
		return err
	}
	rd, err := objs.Events.NewReader()
	if err != nil {
		return err
	}
	cli.CloseOnDone(ctx, rd)

	fmt.Fprintf(out, "# tracing with %s\n", how)
	if o.timestamp {
		fmt.Fprintf(out, "%-12s ", "TIME(s)")
	}
	fmt.Fprintf(out, "%-7s %-16s %3s %3s %s\n", "PID", "COMM", "FD", "ERR", "PATH")
	if ready != nil {
		ready()
	}
	var first uint64
	for {
		ev, err := rd.Read()
		if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.name != "" && !strings.Contains(ev.CommString(), o.name) {
			continue
		}
		if o.timestamp {
			if first == 0 {
				first = ev.TsNs
			}
			fmt.Fprintf(out, "%-12.6f ", time.Duration(ev.TsNs-first).Seconds())
		}
		fd, errno := int(ev.Ret), 0
		if fd < 0 {
			fd, errno = -1, -int(ev.Ret)
		}
		fmt.Fprintf(out, "%-7d %-16s %3d %3d %s\n", ev.Pid, ev.CommString(), fd, errno, ev.FnameString())
	}
}
