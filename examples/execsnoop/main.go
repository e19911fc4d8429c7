// Command execsnoop prints every new process as it is executed: parent
// and process ids, the return value of execve and the arguments.
//
// The kernel sends a fixed header and then only as many bytes of
// arguments as the process had (a variable-length record); the typed ring
// buffer reader decodes the header and leaves the unsent tail zero, and
// the record's length says how much was real.
//
//	sudo go run ./examples/execsnoop -duration 10s
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -mcpu=v3 -I../include" execsnoop.bpf.c

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"github.com/skelgen/skelgen/examples/internal/cli"
)

type options struct {
	uid        int
	failedOnly bool
	noFailed   bool
	name       string
	maxArgs    int
	timestamp  bool
}

func main() {
	var o options
	flag.IntVar(&o.uid, "uid", -1, "trace only this user id (-1: every user)")
	flag.BoolVar(&o.failedOnly, "x", false, "only failed execs")
	flag.BoolVar(&o.noFailed, "no-failed", false, "leave failed execs out (filtered in the kernel)")
	flag.StringVar(&o.name, "name", "", "only commands whose name contains this")
	flag.IntVar(&o.maxArgs, "max-args", 20, "arguments kept per exec (at most 20)")
	flag.BoolVar(&o.timestamp, "t", false, "print a timestamp column")
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
	spec, err := LoadExecsnoopSpec()
	if err != nil {
		return err
	}
	if o.uid >= 0 {
		if err := spec.Variables.TargetUid.Set(uint32(o.uid)); err != nil {
			return err
		}
	}
	if err := spec.Variables.IgnoreFailed.Set(o.noFailed); err != nil {
		return err
	}
	if err := spec.Variables.MaxArgs.Set(uint32(min(max(o.maxArgs, 1), 20))); err != nil {
		return err
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

	if o.timestamp {
		fmt.Fprintf(out, "%-8s ", "TIME")
	}
	fmt.Fprintf(out, "%-16s %-7s %-7s %3s %s\n", "PCOMM", "PID", "PPID", "RET", "ARGS")
	if ready != nil {
		ready()
	}
	for {
		rec, err := rd.ReadRecord()
		if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		ev := rec.Value
		if o.failedOnly && ev.Retval >= 0 || o.name != "" && !strings.Contains(ev.CommString(), o.name) {
			continue
		}
		if o.timestamp {
			fmt.Fprintf(out, "%-8s ", time.Now().Format("15:04:05"))
		}
		fmt.Fprintf(out, "%-16s %-7d %-7d %3d %s\n", ev.CommString(), ev.Pid, ev.Ppid, ev.Retval, formatArgs(ev.Args[:min(int(ev.ArgsSize), len(ev.Args))], int(ev.ArgsCount)))
	}
}

// formatArgs joins the NUL-separated arguments, quoting those with spaces;
// an argument cut at the kernel's limit ends in "...".
func formatArgs(b []byte, count int) string {
	parts := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	var out []string
	for _, p := range parts[:min(count, len(parts))] {
		s := string(p)
		if strings.ContainsAny(s, " \t\"") {
			s = strconv.Quote(s)
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}
