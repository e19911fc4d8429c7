// Command tcpcc registers a TCP congestion control written in BPF (Reno,
// as a struct_ops map), sends data over a loopback connection that selects
// it with setsockopt(TCP_CONGESTION), and prints how often the kernel
// called each of its callbacks and the largest congestion window it set.
//
//	sudo go run ./examples/tcpcc -mb 64
//
// While it runs, any socket may select it by name: sysctl
// net.ipv4.tcp_available_congestion_control lists it. -name registers it
// under another name, set in the struct_ops map's structure before load.
//go:build linux

package main

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -header vmlinux.h tcpcc.bpf.c

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// defaultName is the congestion control's name in the source (.name).
const defaultName = "skelgen_reno"

func main() {
	mb := flag.Int("mb", 64, "MiB to send over the loopback connection")
	name := flag.String("name", defaultName, "register the congestion control under this name (at most 15 bytes)")
	flag.Parse()
	if err := run(os.Stdout, *mb, *name); err != nil {
		log.Fatal(err)
	}
}

// report is what the callbacks counted.
type report struct {
	calls    [4]uint64
	maxCwnd  uint32
	selected string // the connection's congestion control, read back
}

// run registers the congestion control as name, sends mb MiB through a
// loopback connection using it, and prints the counts.
func run(out io.Writer, mb int, name string) error {
	spec, err := LoadTcpccSpec()
	if err != nil {
		return err
	}
	if err := rename(spec, name); err != nil {
		return err
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return err
	}
	defer objs.Close()
	// AttachAll registers the struct_ops map (objs.SkelgenReno.Attach
	// alone would do the same: the programs attach through it).
	if err := objs.AttachAll(); err != nil {
		return err
	}
	r, err := transfer(mb, name)
	if err != nil {
		return err
	}
	if r.calls, err = objs.Variables.Calls.Get(); err != nil {
		return err
	}
	if r.maxCwnd, err = objs.Variables.MaxCwnd.Get(); err != nil {
		return err
	}
	fmt.Fprintf(out, "connection's congestion control: %s\n", r.selected)
	fmt.Fprintf(out, "%d MiB sent\n", mb)
	for i, cb := range []string{"ssthresh", "cong_avoid", "undo_cwnd", "init"} {
		fmt.Fprintf(out, "%-10s %8d calls\n", cb, r.calls[i])
	}
	fmt.Fprintf(out, "largest congestion window set: %d segments\n", r.maxCwnd)
	return nil
}

// rename sets the name the congestion control registers under, a data
// member of its struct_ops structure.
func rename(spec *TcpccSpec, name string) error {
	ops, err := spec.Maps.SkelgenReno.Value()
	if err != nil {
		return err
	}
	if len(name) == 0 || len(name) >= len(ops.Name) {
		return fmt.Errorf("-name %q: want 1 to %d bytes", name, len(ops.Name)-1)
	}
	ops.Name = [16]byte{}
	copy(ops.Name[:], name)
	return spec.Maps.SkelgenReno.SetValue(ops)
}

// transfer sends mb MiB over a loopback TCP connection whose sender
// selects the congestion control, and returns the name the socket reports.
func transfer(mb int, name string) (report, error) {
	var r report
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(io.Discard, c)
		c.Close()
		done <- err
	}()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("setsockopt TCP_CONGESTION %s: %w", name, serr)
		}
		return nil
	}}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		return r, err
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		c.Close()
		return r, err
	}
	raw.Control(func(fd uintptr) {
		r.selected, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if err != nil {
		c.Close()
		return r, err
	}
	buf := make([]byte, 1<<20)
	for range mb {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return r, err
		}
	}
	if err := c.Close(); err != nil {
		return r, err
	}
	return r, <-done
}
