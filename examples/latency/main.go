// Command latency traces system call latency. Kernel tracepoints count
// latencies into a log2 histogram; every interval the Go host runs the
// object's user-space program, which computes percentiles, prints the
// histogram and reports metrics back through a host function.
//
// As root it traces the real kernel. Otherwise (or with -simulate) it runs
// the object in process: no kernel programs, every map in user space, fed
// with synthetic latencies, and the same user-space program reports them.
//
//	go generate ./examples/latency && go run ./examples/latency -duration 5s
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen latency.bpf.c

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long to trace (0: until interrupted)")
	interval := flag.Duration("interval", time.Second, "how often to report")
	pid := flag.Int("pid", 0, "trace only this process (0: every process)")
	simulate := flag.Bool("simulate", false, "run in process on synthetic data even as root")
	flag.Parse()

	inProcess := *simulate || os.Geteuid() != 0
	if err := run(os.Stdout, *duration, *interval, uint32(*pid), inProcess); err != nil {
		log.Fatal(err)
	}
}

// metrics is the host side of the object: the user-space program calls
// host_metric, which lands in HostMetric.
type metrics struct {
	values map[string]uint64
}

func (m *metrics) HostMetric(name string, value uint64) { m.values[name] = value }

func run(out io.Writer, duration, interval time.Duration, pid uint32, inProcess bool) error {
	spec, err := LoadLatencySpec()
	if err != nil {
		return err
	}
	if err := spec.Variables.TargetTgid.Set(pid); err != nil {
		return err
	}
	host := &metrics{values: map[string]uint64{}}
	objs, err := spec.Load(&LatencyLoadOptions{InProcess: inProcess, Output: out, Host: host})
	if err != nil {
		return err
	}
	defer objs.Close()

	var feed func() error
	if inProcess {
		fmt.Fprintln(out, "mode: in process on synthetic data (not root, or -simulate): kernel programs not loaded, maps in user space")
		rng := rand.New(rand.NewPCG(1, 2))
		feed = func() error { return synthetic(objs, rng) }
	} else {
		if err := objs.AttachAll(); err != nil {
			return err
		}
		fmt.Fprintln(out, "mode: kernel: tracing real system calls (tracepoints raw_syscalls/sys_enter and sys_exit)")
		feed = func() error { return nil }
	}

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
		if err := feed(); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n%s\n", time.Now().Format("15:04:05"))
		var sum LatencySummary
		if _, err := objs.Report.Run(&sum); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if sum.Count == 0 {
			fmt.Fprintln(out, "no system calls in this interval")
			continue
		}
		fmt.Fprintf(out, "mean %d ns; metrics from host_metric: %s\n", sum.MeanNs, formatMetrics(host.values))
	}
}

// synthetic feeds the maps one interval of made-up latencies, as the kernel
// programs would: log-normal around 2 µs with a slow tail.
func synthetic(objs *LatencyObjects, rng *rand.Rand) error {
	var tot LatencyTotals
	counts := map[uint32]uint64{}
	for range 5000 {
		ns := uint64(math.Exp(rng.NormFloat64()*1.2 + math.Log(2000)))
		if rng.IntN(100) == 0 {
			ns *= 500
		}
		counts[uint32(bits.Len64(ns)-1)]++
		tot.Count++
		tot.SumNs += ns
		tot.MaxNs = max(tot.MaxNs, ns)
	}
	for slot, n := range counts {
		if err := objs.Hist.Put(slot, n); err != nil {
			return err
		}
	}
	return objs.Totals.Put(0, tot)
}

func formatMetrics(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}
