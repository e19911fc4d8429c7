// Command killsnoop prints the signals processes send with kill(2): the
// sender, the signal, the target and the result.
//
//	sudo go run ./examples/killsnoop -x -duration 30s
//
// Records arrive through a perf event array; the reader is typed by the
// record struct the program defines inside its function and builds on its
// stack, which skelgen finds in the source.
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" killsnoop.bpf.c

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	pid        int
	signal     int
	failedOnly bool
}

func main() {
	var o options
	flag.IntVar(&o.pid, "pid", 0, "trace only signals sent by this process (0: every process)")
	flag.IntVar(&o.signal, "s", -1, "trace only this signal number (-1: every signal)")
	flag.BoolVar(&o.failedOnly, "x", false, "only failed kill calls")
	duration := flag.Duration("duration", 0, "how long to trace (0: until interrupted)")
	flag.Parse()

	ctx, stop := cli.Context(*duration)
	defer stop()
	if err := run(ctx, os.Stdout, o, nil); err != nil {
		log.Fatal(err)
	}
}

// run traces until ctx ends; ready, when not nil, is called once the
// programs are attached.
func run(ctx context.Context, out io.Writer, o options, ready func()) error {
	spec, err := LoadKillsnoopSpec()
	if err != nil {
		return err
	}
	for _, set := range []error{
		spec.Variables.TargetTgid.Set(uint32(o.pid)),
		spec.Variables.TargetSignal.Set(int32(o.signal)),
		spec.Variables.FailedOnly.Set(o.failedOnly),
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
	if err := objs.AttachAll(); err != nil {
		return err
	}
	rd, err := objs.Events.NewReader()
	if err != nil {
		return err
	}
	cli.CloseOnDone(ctx, rd)
	fmt.Fprintf(out, "%-8s %-7s %-16s %-4s %-7s %s\n", "TIME", "PID", "COMM", "SIG", "TPID", "RESULT")
	if ready != nil {
		ready()
	}
	var lost uint64
	for {
		ev, err := rd.Read()
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		if n := rd.Lost(); n > lost {
			fmt.Fprintf(out, "# lost %d events\n", n-lost)
			lost = n
		}
		result := "0"
		if ev.Ret < 0 {
			result = fmt.Sprintf("%d (%v)", ev.Ret, syscall.Errno(-ev.Ret))
		}
		fmt.Fprintf(out, "%-8s %-7d %-16s %-4d %-7d %s\n", time.Now().Format("15:04:05"), ev.Pid, ev.CommString(), ev.Sig, ev.Tpid, result)
	}
}
