package hostile

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// mode is one way of loading the object: everything in process, or the
// kernel program and its maps in the kernel (as root).
type mode struct {
	name     string
	inProc   bool
	needRoot bool
}

var modes = []mode{{name: "in-process", inProc: true}, {name: "kernel", needRoot: true}}

func load(t *testing.T, md mode, opts HostileLoadOptions) *HostileObjects {
	t.Helper()
	objs, _ := loadHost(t, md, opts)
	return objs
}

// loadHost is load that also returns the host of the objects.
func loadHost(t *testing.T, md mode, opts HostileLoadOptions) (*HostileObjects, *testHost) {
	t.Helper()
	if md.needRoot {
		testenv.Kernel(t)
	}
	opts.InProcess = md.inProc
	h := &testHost{}
	opts.Host = h
	objs, err := LoadHostile(&opts)
	if err != nil {
		t.Fatal(err)
	}
	h.objs = objs
	t.Cleanup(func() { objs.Close() })
	return objs, h
}

// testHost is the host of hostile.bpf.c. host_bump(key, depth) runs
// via_host again while depth > 0 (a program running itself from its host
// function), else bump (another program), and returns what bump read back:
// 0 when the run it started failed, with the first failure other than
// ErrClosed kept in err.
type testHost struct {
	objs *HostileObjects
	mu   sync.Mutex
	err  error
}

func (h *testHost) HostBump(key, depth uint32) uint64 {
	c := HostileBumpCtx{Key: key}
	var err error
	if depth > 0 {
		c.Del = depth - 1
		_, err = h.objs.ViaHost.Run(&c)
	} else {
		_, err = h.objs.Bump.Run(&c)
	}
	if err != nil {
		h.mu.Lock()
		if h.err == nil && !errors.Is(err, bridge.ErrClosed) {
			h.err = err
		}
		h.mu.Unlock()
		return 0
	}
	return c.Seen
}

// failure returns the first failure of a run host_bump started.
func (h *testHost) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// engine runs a user program one way: its translation (the typed Run) or
// the interpreter (the runtime program under it).
type engine struct {
	name string
	run  func(p *bridge.UserProgram[struct{}]) (uint64, error)
}

var engines = []engine{
	{"translation", func(p *bridge.UserProgram[struct{}]) (uint64, error) { return p.Run(nil) }},
	{"interpreter", func(p *bridge.UserProgram[struct{}]) (uint64, error) { return p.Raw().Run(nil) }},
}

func each(t *testing.T, f func(t *testing.T, md mode, e engine)) {
	for _, md := range modes {
		for _, e := range engines {
			t.Run(md.name+"/"+e.name, func(t *testing.T) { f(t, md, e) })
		}
	}
}

func wantWriteFault(t *testing.T, err error, region string) {
	t.Helper()
	var me *runtime.MemoryError
	if !errors.As(err, &me) || !me.Write || me.Region != region+" (read-only)" {
		t.Fatalf("got %v, want a *MemoryError writing read-only %s", err, region)
	}
}

// TestReadOnlyMaps writes a BPF_F_RDONLY_PROG map (mmapped from the kernel
// in kernel mode) through a looked-up pointer and the update helper, and
// .rodata directly: a *MemoryError and -EPERM, never a signal, and the
// memory unchanged.
func TestReadOnlyMaps(t *testing.T) {
	each(t, func(t *testing.T, md mode, e engine) {
		objs := load(t, md, HostileLoadOptions{})
		if !objs.WriteRoLookup.Translated() {
			t.Fatal("the skeleton has no translation")
		}
		_, err := e.run(objs.WriteRoLookup)
		wantWriteFault(t, err, "map ro_arr value")

		r0, err := e.run(objs.UpdateRo)
		if err != nil || int64(r0) != -1 {
			t.Errorf("update of a read-only map: r0=%d err=%v, want -EPERM (-1)", int64(r0), err)
		}
		if v, err := objs.RoArr.Lookup(1); err != nil || v != 0 {
			t.Errorf("ro_arr[1] = %d, %v after the attempts, want 0", v, err)
		}

		_, err = e.run(objs.WriteRodata)
		wantWriteFault(t, err, ".rodata")
		if v, err := objs.Variables.Limit.Get(); err != nil || v != 7 {
			t.Errorf("limit = %d, %v after the attempt, want 7", v, err)
		}
	})
}

// TestFrozenKernelMap: the update helper on a kernel map frozen after
// load returns the kernel's -EPERM.
func TestFrozenKernelMap(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			objs := load(t, modes[1], HostileLoadOptions{})
			if r0, err := e.run(objs.UpdateKhash); err != nil || r0 != 0 {
				t.Fatalf("update before freezing: r0=%d err=%v", int64(r0), err)
			}
			if err := objs.Khash.Raw().Freeze(); err != nil {
				t.Fatal(err)
			}
			if r0, err := e.run(objs.UpdateKhash); err != nil || int64(r0) != -1 {
				t.Errorf("update of a frozen map: r0=%d err=%v, want -EPERM (-1)", int64(r0), err)
			}
		})
	}
}

// TestNullMinusOne: the fault names NULL-1, not another kind of address.
func TestNullMinusOne(t *testing.T) {
	each(t, func(t *testing.T, md mode, e engine) {
		objs := load(t, md, HostileLoadOptions{})
		_, err := e.run(objs.ReadNullMinusOne)
		var me *runtime.MemoryError
		if !errors.As(err, &me) || me.Region != "NULL" || me.Offset != -1 || me.Insn != 1 {
			t.Fatalf("got %v, want a read fault at NULL-1 at instruction 1", err)
		}
	})
}

// TestHugeHistogram prints histograms of a hash map declared with 2^32-1
// entries: the built-ins walk what the map holds instead of allocating
// max_entries slots, and the linear histogram stops at its display limit.
func TestHugeHistogram(t *testing.T) {
	each(t, func(t *testing.T, md mode, e engine) {
		var out bytes.Buffer
		objs := load(t, md, HostileLoadOptions{Output: &out})
		if _, err := e.run(objs.HugeHist); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		for _, want := range []string{
			"8 -> 15         : 5 ",        // the log2 histogram's slot 3 ([8, 16))
			"         3 : 5 ",             // the linear histogram's slot 3
			"(slots past 4095 not shown)", // the entry at 0xfffffff0
		} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
		}
	})
}

// TestHistogramBudget fills the huge map from Go and gives the program a
// budget smaller than the walk: the built-in stops the run with
// ErrBudget, in both engines.
func TestHistogramBudget(t *testing.T) {
	each(t, func(t *testing.T, md mode, e engine) {
		objs := load(t, md, HostileLoadOptions{Budget: 500, Output: &bytes.Buffer{}})
		for k := range uint32(2000) {
			if err := objs.Huge.Put(k+100, 1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.run(objs.HugeHist); !errors.Is(err, runtime.ErrBudget) {
			t.Fatalf("histogram of 2000 entries with budget 500: %v, want ErrBudget", err)
		}
	})
}

// TestUseAfterClose: after Close, runs, typed map calls (on kernel maps
// too) and variables return ErrClosed. In kernel mode the sections are unmapped by then, so
// any access would be a signal.
func TestUseAfterClose(t *testing.T) {
	for _, md := range modes {
		t.Run(md.name, func(t *testing.T) {
			objs := load(t, md, HostileLoadOptions{})
			if _, err := objs.Bump.Run(&HostileBumpCtx{Key: 1}); err != nil {
				t.Fatal(err)
			}
			if err := objs.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := objs.Bump.Run(&HostileBumpCtx{Key: 1}); !errors.Is(err, bridge.ErrClosed) {
				t.Errorf("Run after Close: %v, want ErrClosed", err)
			}
			if _, err := objs.WriteRodata.Raw().Run(nil); !errors.Is(err, runtime.ErrClosed) {
				t.Errorf("runtime program run after Close: %v, want ErrClosed", err)
			}
			if _, err := objs.Counts.Lookup(1); !errors.Is(err, bridge.ErrClosed) {
				t.Errorf("Lookup after Close: %v, want ErrClosed", err)
			}
			// A kernel map in kernel mode: its file descriptor is closed.
			if err := objs.Khash.Put(1, 1); !errors.Is(err, bridge.ErrClosed) {
				t.Errorf("Put on khash after Close: %v, want ErrClosed", err)
			}
			if _, err := objs.Variables.Limit.Get(); !errors.Is(err, bridge.ErrClosed) {
				t.Errorf("variable after Close: %v, want ErrClosed", err)
			}
		})
	}
}
