// Command latency traces system call latency with a kernel program and
// prints a log2 histogram every interval.
//
//	go generate ./examples/latency && sudo go run ./examples/latency -duration 5s
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen latency.bpf.c

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long to trace (0: until interrupted)")
	interval := flag.Duration("interval", time.Second, "how often to report")
	pid := flag.Int("pid", 0, "trace only this process (0: every process)")
	flag.Parse()

	if err := run(os.Stdout, *duration, *interval, uint32(*pid)); err != nil {
		log.Fatal(err)
	}
}

func run(out io.Writer, duration, interval time.Duration, pid uint32) error {
	spec, err := LoadLatencySpec()
	if err != nil {
		return err
	}
	if err := spec.Variables.TargetTgid.Set(pid); err != nil {
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
	fmt.Fprintf(out, "tracing system calls (kernel tracepoints raw_syscalls/sys_enter and sys_exit)\n")

	tick := time.NewTicker(interval)
	defer tick.Stop()
	var deadline <-chan time.Time
	if duration > 0 {
		deadline = time.After(duration)
	}
	for {
		select {
		case <-deadline:
			return nil
		case <-tick.C:
		}
		var slots [64]uint64
		for i := range slots {
			if slots[i], err = objs.Hist.Lookup(uint32(i)); err != nil {
				return err
			}
		}
		tot, err := objs.Totals.Lookup(0)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n%s: %d syscalls, mean %d ns, max %d ns\n", time.Now().Format("15:04:05"), tot.Count, mean(tot), tot.MaxNs)
		printLog2Hist(out, slots[:], "nsecs")
	}
}

func mean(t LatencyTotals) uint64 {
	if t.Count == 0 {
		return 0
	}
	return t.SumNs / t.Count
}

// printLog2Hist prints a histogram in the format of bcc's print_log2_hist.
func printLog2Hist(out io.Writer, slots []uint64, unit string) {
	last, max := -1, uint64(0)
	for i, v := range slots {
		if v > 0 {
			last = i
		}
		if v > max {
			max = v
		}
	}
	if last < 0 {
		return
	}
	fmt.Fprintf(out, "%24s : count    distribution\n", unit)
	for i := 0; i <= last; i++ {
		low, high := uint64(1)<<i, uint64(1)<<(i+1)-1
		if i == 0 {
			low = 0
		}
		stars := int(slots[i] * 40 / max)
		fmt.Fprintf(out, "%10d -> %-10d : %-8d |%-40s|\n", low, high, slots[i], strings.Repeat("*", stars))
	}
}
