package sizing

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// An unsized map is an error before the kernel sees it, naming the map and
// the setter.
func TestUnsized(t *testing.T) {
	testenv.Kernel(t)
	_, err := LoadSizing(nil)
	if err == nil || !strings.Contains(err.Error(), "map counts") || !strings.Contains(err.Error(), "SetMaxEntries") {
		t.Fatalf("load of unsized maps: %v, want an error naming counts and SetMaxEntries", err)
	}
	spec, err := LoadSizingSpec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Maps.Counts.SetMaxEntries(16)
	spec.Maps.Stacks.SetMaxEntries(16)
	spec.Maps.Outer.InnerMap().SetMaxEntries(4)
	_, err = spec.Load(nil)
	if err == nil || !strings.Contains(err.Error(), "map stacks") || !strings.Contains(err.Error(), "SetValueSize") {
		t.Fatalf("load of a stack map without value size: %v, want an error naming stacks and SetValueSize", err)
	}
}

// TestSized sizes every map from "options", loads, and reads stacks of
// this process's getppid calls back through the typed stack map.
func TestSized(t *testing.T) {
	testenv.Kernel(t)
	const depth, entries, inner = 12, 64, 8
	spec, err := LoadSizingSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	spec.Maps.Stacks.SetMaxEntries(entries)
	spec.Maps.Stacks.SetValueSize(depth * 8)
	spec.Maps.Counts.SetMaxEntries(entries)
	spec.Maps.Outer.InnerMap().SetMaxEntries(inner)
	if spec.Maps.Counts.MaxEntries() != entries || spec.Maps.Stacks.ValueSize() != depth*8 {
		t.Fatal("the getters do not report what was set")
	}
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if got := objs.Counts.Raw().MaxEntries(); got != entries {
		t.Errorf("counts loaded with max_entries %d, want %d", got, entries)
	}
	if got := objs.Stacks.Raw().ValueSize(); got != depth*8 || objs.Stacks.Depth() != depth {
		t.Errorf("stacks loaded with value size %d (depth %d), want %d", got, objs.Stacks.Depth(), depth*8)
	}
	// An inner map sized as set is accepted by the outer map; one of
	// another size is refused by the kernel.
	good, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: inner})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if err := objs.Outer.Raw().Put(uint32(0), good); err != nil {
		t.Errorf("inner map of the size set: %v", err)
	}
	bad, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: inner + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := objs.Outer.Raw().Put(uint32(0), bad); err == nil {
		t.Error("the outer map took an inner map of another size: the inner spec was not sized")
	}

	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		syscall.Getppid()
	}
	var total uint64
	var err2 error
	for id, n := range objs.Counts.All(&err2) {
		total += n
		frames, err := objs.Stacks.Lookup(id)
		if err != nil {
			t.Fatalf("stack %d: %v", id, err)
		}
		if len(frames) == 0 || len(frames) > depth {
			t.Errorf("stack %d: %d frames, want 1..%d", id, len(frames), depth)
		}
		t.Logf("stack %d seen %d times: %d frames, innermost %#x", id, n, len(frames), frames[0])
	}
	if err2 != nil {
		t.Fatal(err2)
	}
	if total != 5 {
		t.Errorf("counted %d getppid calls of this process, want 5", total)
	}
	// A stack deleted from Go is gone.
	for id := range objs.Counts.All(&err2) {
		if err := objs.Stacks.Delete(id); err != nil {
			t.Fatalf("delete stack %d: %v", id, err)
		}
		if _, err := objs.Stacks.Lookup(id); !errors.Is(err, ebpf.ErrKeyNotExist) {
			t.Errorf("stack %d after Delete: %v, want ErrKeyNotExist", id, err)
		}
		break
	}
}
