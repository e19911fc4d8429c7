// Command usdtsnoop prints every hit of a USDT probe (a static probe point
// compiled into a program with sys/sdt.h) with its arguments, which the
// BPF program reads through libbpf's usdt.bpf.h as the probe's note
// describes them (a register, memory, a constant).
//
//	sudo go run ./examples/usdtsnoop -bin /usr/bin/python3 -probe python:function__entry
//
// The probe is attached by the binary's path: processes started later are
// traced too (-pid keeps one).
//go:build amd64 || arm64

package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -target amd64,arm64 -header vmlinux.h usdtsnoop.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	bin      string
	provider string
	name     string
	pid      int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the program or library holding the probe")
	probe := flag.String("probe", "", "the probe, as provider:name")
	flag.IntVar(&o.pid, "pid", 0, "trace only this process (0: every process running the binary)")
	duration := flag.Duration("duration", 0, "how long to trace (0: until interrupted)")
	flag.Parse()
	var ok bool
	if o.provider, o.name, ok = strings.Cut(*probe, ":"); !ok || o.bin == "" || o.provider == "" || o.name == "" {
		log.Fatal("usage: usdtsnoop -bin PATH -probe PROVIDER:NAME [-pid N]")
	}

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// run traces until ctx ends; ready, when not nil, is called once the probe
// is attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadUsdtsnoopSpec()
	if err != nil {
		return err
	}
	if err := spec.Variables.TargetTgid.Set(uint32(o.pid)); err != nil {
		return err
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return err
	}
	defer objs.Close()
	if _, err := objs.OnProbe.AttachTo(o.bin, o.provider, o.name, o.pid); err != nil {
		return err
	}
	rd, err := objs.Hits.NewReader()
	if err != nil {
		return err
	}
	cli.CloseOnDone(ctx, rd)
	fmt.Fprintf(out, "%-7s %-7s %-16s %s\n", "PID", "TID", "COMM", "ARGS")
	if ready != nil {
		ready()
	}
	for {
		h, err := rd.Read()
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		n := min(int(h.Nargs), len(h.Args))
		args := make([]string, n)
		for i := range n {
			args[i] = fmt.Sprint(h.Args[i])
		}
		fmt.Fprintf(out, "%-7d %-7d %-16s %s\n", h.Pid, h.Tid, h.CommString(), strings.Join(args, " "))
	}
}
