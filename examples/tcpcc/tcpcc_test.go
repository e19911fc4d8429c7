//go:build linux

package main

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// TestTcpcc registers the congestion control, sends 16 MiB over a
// loopback connection that selects it, and requires the socket to report
// it, the kernel to have called init once (for the one sending socket) and
// cong_avoid as the window grew, and the window to have grown past the
// initial ten segments through cong_avoid's own writes.
func TestTcpcc(t *testing.T) {
	testenv.Kernel(t)
	var out bytes.Buffer
	if err := run(&out, 16, defaultName); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	if !bytes.Contains(out.Bytes(), []byte("connection's congestion control: "+defaultName+"\n")) {
		t.Errorf("the connection did not use %s", defaultName)
	}
	count := func(re string) uint64 {
		m := regexp.MustCompile(re).FindSubmatch(out.Bytes())
		if m == nil {
			t.Fatalf("no %q in the output", re)
		}
		n, _ := strconv.ParseUint(string(m[1]), 10, 64)
		return n
	}
	if n := count(`init +(\d+) calls`); n != 1 {
		t.Errorf("init called %d times, want once", n)
	}
	if n := count(`cong_avoid +(\d+) calls`); n == 0 {
		t.Errorf("cong_avoid never called")
	}
	if w := count(`largest congestion window set: (\d+) segments`); w <= 10 {
		t.Errorf("largest window %d: cong_avoid did not grow it", w)
	}
}

// selectable tries to select the congestion control name on a new socket.
func selectable(t *testing.T, name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
}

// TestRename: the name set in the structure before load is the one the
// kernel registers, and the connection uses it.
func TestRename(t *testing.T) {
	testenv.Kernel(t)
	const other = "skelgen_t2"
	var out bytes.Buffer
	if err := run(&out, 1, other); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("connection's congestion control: "+other+"\n")) {
		t.Errorf("the connection did not use %s:\n%s", other, out.String())
	}
	spec, err := LoadTcpccSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := rename(spec, "sixteen_bytes_xx"); err == nil {
		t.Errorf("a 16-byte name was accepted")
	}
	if ops, err := spec.Maps.SkelgenReno.Value(); err != nil || string(bytes.TrimRight(ops.Name[:], "\x00")) != defaultName {
		t.Errorf("the source's name: %q, %v", ops.Name, err)
	}
}

// TestRegisteredWhileAttached: a socket can select the congestion control
// only between Attach and Close.
func TestRegisteredWhileAttached(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadTcpcc(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := selectable(t, defaultName); !errors.Is(err, unix.ENOENT) {
		t.Errorf("loaded, not attached: setsockopt: %v, want ENOENT", err)
	}
	if _, err := objs.SkelgenReno.Attach(); err != nil {
		t.Fatal(err)
	}
	if err := selectable(t, defaultName); err != nil {
		t.Errorf("attached: setsockopt: %v", err)
	}
	if err := objs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := selectable(t, defaultName); !errors.Is(err, unix.ENOENT) {
		t.Errorf("closed: setsockopt: %v, want ENOENT", err)
	}
}

// TestLoadInProcess: without the kernel the skeleton loads, its variables
// read zero, and Attach says why it cannot register anything.
func TestLoadInProcess(t *testing.T) {
	objs, err := LoadTcpcc(&TcpccLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if _, err := objs.SkelgenReno.Attach(); !errors.Is(err, bridge.ErrInProcess) {
		t.Errorf("Attach in process: %v, want ErrInProcess", err)
	}
	if calls, err := objs.Variables.Calls.Get(); err != nil || calls != [4]uint64{} {
		t.Errorf("calls in process: %v, %v", calls, err)
	}
}
