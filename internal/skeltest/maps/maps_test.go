package maps

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

func TestMapsThroughSkeleton(t *testing.T) {
	testenv.Kernel(t)
	pin := testenv.BPFFS(t)

	objs, err := LoadMaps(&MapsLoadOptions{Collection: ebpf.CollectionOptions{Maps: ebpf.MapOptions{PinPath: pin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()

	rb, err := objs.Events.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	pr, err := objs.PerfEvents.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()

	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	const calls = 3
	for range calls {
		syscall.Getppid()
	}
	tgid := uint32(os.Getpid())

	st, err := objs.Counts.Lookup(MapsKey{Pid: tgid})
	if err != nil {
		t.Fatalf("counts[%d]: %v", tgid, err)
	}
	if st.Count < calls {
		t.Errorf("counts[%d].Count = %d, want >= %d", tgid, st.Count, calls)
	}
	if st.LastNs == 0 {
		t.Error("counts: LastNs not set")
	}
	if len(st.Comm) == 0 || st.Comm[0] == 0 {
		t.Error("counts: Comm empty")
	}
	var iterErr error
	seen := false
	for k, v := range objs.Counts.All(&iterErr) {
		if k.Pid == tgid && v.Count == st.Count {
			seen = true
		}
	}
	if iterErr != nil || !seen {
		t.Errorf("iterating counts: seen=%v err=%v", seen, iterErr)
	}

	total, err := objs.Totals.Lookup(0)
	if err != nil || total < calls {
		t.Errorf("totals[0] = %d, %v; want >= %d", total, err, calls)
	}
	perCPU, err := objs.PercpuHits.Lookup(0)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, v := range perCPU {
		sum += v
	}
	if sum < calls {
		t.Errorf("percpu_hits[0] summed over %d CPUs = %d, want >= %d", len(perCPU), sum, calls)
	}
	entries := 0
	for k, vs := range objs.PercpuHits.All(&iterErr) {
		entries++
		if k == 0 && len(vs) != len(perCPU) {
			t.Errorf("percpu_hits.All: %d values for key 0, Lookup gave %d", len(vs), len(perCPU))
		}
	}
	if iterErr != nil || entries == 0 {
		t.Errorf("iterating percpu_hits: %d entries, err=%v", entries, iterErr)
	}
	if _, err := objs.Recent.Lookup(tgid); err != nil {
		t.Errorf("recent[%d]: %v", tgid, err)
	}
	if v, err := objs.Inner.Lookup(0); err != nil || v < calls {
		t.Errorf("inner[0] (through outer) = %d, %v; want >= %d", v, err, calls)
	}
	inner, err := objs.Outer.Lookup(0)
	if err != nil {
		t.Fatalf("outer[0]: %v", err)
	}
	inner.Close()
	// An inner map stored from Go is found through the outer one, and
	// gone after Delete.
	mine, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	if err := mine.Put(uint32(0), uint64(77)); err != nil {
		t.Fatal(err)
	}
	if err := objs.Outer.Update(1, mine, ebpf.UpdateAny); err != nil {
		t.Fatalf("outer[1] = a new inner map: %v", err)
	}
	got, err := objs.Outer.Lookup(1)
	if err != nil {
		t.Fatalf("outer[1]: %v", err)
	}
	var v77 uint64
	if err := got.Lookup(uint32(0), &v77); err != nil || v77 != 77 {
		t.Errorf("outer[1][0] = %d, %v; want 77", v77, err)
	}
	got.Close()
	if err := objs.Outer.Delete(1); err != nil {
		t.Fatalf("delete outer[1]: %v", err)
	}
	if _, err := objs.Outer.Lookup(1); !errors.Is(err, ebpf.ErrKeyNotExist) {
		t.Errorf("outer[1] after Delete: %v, want ErrKeyNotExist", err)
	}

	// Per-CPU values stored from Go land on their CPUs. The attached
	// program may count a few more calls meanwhile, so each value is at
	// least what was written and far below the next CPU's.
	want := make([]uint64, len(perCPU))
	for i := range want {
		want[i] = 1<<40 + uint64(i)<<32
	}
	if err := objs.PercpuHits.Update(0, want, ebpf.UpdateAny); err != nil {
		t.Fatalf("percpu_hits update: %v", err)
	}
	back, err := objs.PercpuHits.Lookup(0)
	if err != nil || len(back) != len(want) {
		t.Fatalf("percpu_hits after update: %d values, %v; want %d", len(back), err, len(want))
	}
	for i := range want {
		if back[i] < want[i] || back[i]-want[i] > 1<<20 {
			t.Errorf("percpu_hits[0] on CPU %d = %#x, want %#x (plus a few calls)", i, back[i], want[i])
		}
	}
	// An array's entries cannot be deleted; the kernel's refusal comes back.
	if err := objs.PercpuHits.Delete(0); err == nil {
		t.Error("deleting from a per-CPU array succeeded")
	}

	if _, err := os.Stat(filepath.Join(pin, "pinned_counts")); err != nil {
		t.Errorf("pinned map not pinned: %v", err)
	}
	if _, err := objs.PinnedCounts.Lookup(tgid); err != nil {
		t.Errorf("pinned_counts[%d]: %v", tgid, err)
	}

	rb.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		ev, err := rb.Read()
		if err != nil {
			t.Fatalf("ring buffer: %v", err)
		}
		if ev.Tgid == tgid {
			break
		}
	}
	pr.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		ev, err := pr.Read()
		if err != nil {
			t.Fatalf("perf reader: %v", err)
		}
		if ev.Tgid == tgid {
			break
		}
	}

	if err := objs.Counts.Delete(MapsKey{Pid: tgid}); err != nil {
		t.Fatal(err)
	}
	if _, err := objs.Counts.Lookup(MapsKey{Pid: tgid}); !errors.Is(err, ebpf.ErrKeyNotExist) {
		t.Errorf("lookup after delete: %v, want ErrKeyNotExist", err)
	}
	if err := objs.Totals.Put(3, 42); err != nil {
		t.Fatal(err)
	}
	if n, err := bridge.BatchUpdate(objs.Totals, []uint32{1, 2}, []uint64{10, 20}, ebpf.UpdateAny); err != nil || n != 2 {
		t.Errorf("batch update: %d, %v", n, err)
	}
	keys := make([]uint32, 4)
	vals := make([]uint64, 4)
	var cursor ebpf.MapBatchCursor
	n, err := bridge.BatchLookup(objs.Totals, &cursor, keys, vals)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		t.Fatal(err)
	}
	if n != 4 || vals[1] != 10 || vals[2] != 20 || vals[3] != 42 {
		t.Errorf("batch lookup: n=%d keys=%v values=%v", n, keys, vals)
	}
}
