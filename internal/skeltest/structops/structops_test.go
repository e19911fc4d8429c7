//go:build linux

package structops

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skelgen/skelgen/internal/testenv"
)

const name = "skelgen_nolink"

// selectable tries to select the congestion control on a new socket.
func selectable(t *testing.T) error {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
}

// TestRegisteredWhileAttached: the map of a .struct_ops section loads,
// and a socket can select its congestion control only while it is
// attached: between Attach and the link's Close, and again between
// Attach and the skeleton's Close.
func TestRegisteredWhileAttached(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadStructops(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	registered := func(when string, want bool) {
		t.Helper()
		err := selectable(t)
		if want && err != nil {
			t.Errorf("%s: setsockopt: %v", when, err)
		}
		if !want && !errors.Is(err, unix.ENOENT) {
			t.Errorf("%s: setsockopt: %v, want ENOENT", when, err)
		}
	}
	registered("loaded, not attached", false)
	lk, err := objs.SkelgenNolink.Attach()
	if err != nil {
		t.Fatal(err)
	}
	registered("attached", true)
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	registered("link closed", false)
	if _, err := objs.SkelgenNolink.Attach(); err != nil {
		t.Fatal(err)
	}
	registered("attached again", true)
	if err := objs.Close(); err != nil {
		t.Fatal(err)
	}
	registered("closed", false)
}
