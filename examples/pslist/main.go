// Command pslist lists processes as ps does, from a BPF task iterator: the
// kernel walks its tasks and a BPF program writes one record per process
// (with -threads, per thread) into the iterator's output, which pslist
// reads as typed records.
//
//	sudo go run ./examples/pslist -threads
//	sudo go run ./examples/pslist -pid 1
//
// The skeleton gives the iterator an Open method (a reader of its output)
// and an Attach method (a link that can be pinned in bpffs, which cat then
// reads).
package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -type proc pslist.bpf.c

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"

	"github.com/skelgen/skelgen/runtime/bridge"
)

type options struct {
	pid     int
	threads bool
}

func main() {
	var o options
	flag.IntVar(&o.pid, "pid", 0, "list only this process (0: every process)")
	flag.BoolVar(&o.threads, "threads", false, "list every thread, not only each process")
	flag.Parse()
	if err := run(os.Stdout, o); err != nil {
		log.Fatal(err)
	}
}

// run lists the processes (or threads) o selects.
func run(out io.Writer, o options) error {
	procs, err := list(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%7s %7s %7s %6s %7s %s\n", "PID", "TID", "PPID", "UID", "THREADS", "COMM")
	for _, p := range procs {
		fmt.Fprintf(out, "%7d %7d %7d %6d %7d %s\n", p.Pid, p.Tid, p.Ppid, p.Uid, p.Threads, p.CommString())
	}
	return nil
}

// list runs the iterator and returns its records by pid and tid.
func list(o options) ([]PslistProc, error) {
	spec, err := LoadPslistSpec()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables.Threads.Set(o.threads); err != nil {
		return nil, err
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return nil, err
	}
	defer objs.Close()
	rd, err := objs.ListTasks.Open(bridge.IterTask{PID: uint32(o.pid)})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	procs, err := readProcs(rd)
	if err != nil {
		return nil, err
	}
	sort.Slice(procs, func(i, j int) bool {
		if procs[i].Pid != procs[j].Pid {
			return procs[i].Pid < procs[j].Pid
		}
		return procs[i].Tid < procs[j].Tid
	})
	return procs, nil
}

// readProcs reads the iterator's records, the C struct proc, typed by
// -type proc.
func readProcs(r io.Reader) ([]PslistProc, error) {
	var procs []PslistProc
	for p, err := range bridge.IterRecords[PslistProc](r) {
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}
