package globals

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// load loads the object with target_tgid set to tgid and limits.max_events
// to maxEvents, and attaches it.
func load(t *testing.T, tgid uint32, maxEvents uint32) *GlobalsObjects {
	t.Helper()
	spec, err := LoadGlobalsSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(tgid); err != nil {
		t.Fatal(err)
	}
	lim, err := spec.Variables.Limits.Get()
	if err != nil {
		t.Fatal(err)
	}
	if lim.MaxEvents != 8 || lim.Ports[1] != 443 || lim.Mode != GlobalsModeCount {
		t.Fatalf("compiled limits = %+v", lim)
	}
	lim.MaxEvents = maxEvents
	lim.Mode = GlobalsModeTrace
	if err := spec.Variables.Limits.Set(lim); err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objs.Close() })
	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestRodataConstantChangesBehaviour(t *testing.T) {
	testenv.Kernel(t)
	// matched stops at max_events: 0, 3, 6, 9, 12 in steps of weights[MODE_TRACE].
	// Once it has, every run writes the same seq, so matched and
	// last_record.seq can be read apart while other threads of this process
	// make system calls (reading them is one).
	const maxEvents = 12
	me := load(t, uint32(os.Getpid()), maxEvents)
	nobody := load(t, 0, maxEvents)

	for range 5 {
		syscall.Getppid()
	}
	calls, err := me.Variables.Calls.Get()
	if err != nil {
		t.Fatal(err)
	}
	if calls < 105 {
		t.Errorf("calls with target_tgid = our pid: %d, want >= 105", calls)
	}
	other, err := nobody.Variables.Calls.Get()
	if err != nil {
		t.Fatal(err)
	}
	if other != 100 {
		t.Errorf("calls with target_tgid = 0: %d, want 100 (untouched)", other)
	}

	// .bss, .data.custom and a struct in .data, written by the program.
	matched, err := me.Variables.Matched.Get()
	if err != nil || matched != maxEvents {
		t.Errorf("matched = %d, %v; want %d (limits.max_events)", matched, err, maxEvents)
	}
	custom, err := me.Variables.CustomCounter.Get()
	if err != nil || custom <= 5 {
		t.Errorf("custom_counter = %d, %v; want > 5", custom, err)
	}
	hist, err := me.Variables.Hist.Get()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint32
	for _, h := range hist {
		sum += h
	}
	if sum == 0 {
		t.Error("hist is all zero")
	}
	rec, err := me.Variables.LastRecord.Get()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Kind != 7 || rec.Level() != uint32(GlobalsModeTrace) || rec.AsU32()[1] != uint32(os.Getpid()) || rec.Grid[1][2] != 9 {
		t.Errorf("last_record = %+v (level %d, as_u32 %v)", rec, rec.Level(), rec.AsU32())
	}
	if rec.Seq() != uint32(matched)&0xffffff {
		t.Errorf("last_record.seq = %d, matched = %d", rec.Seq(), matched)
	}

	// Writing .data after load is seen by the program.
	if err := me.Variables.Calls.Set(1_000_000); err != nil {
		t.Fatal(err)
	}
	syscall.Getppid()
	if calls, _ := me.Variables.Calls.Get(); calls <= 1_000_000 {
		t.Errorf("calls after Set(1e6) and a syscall: %d", calls)
	}
	// .rodata is read-only after load, and says so; .data does not.
	if err := me.Variables.TargetTgid.Set(1); !errors.Is(err, ebpf.ErrReadOnly) {
		t.Errorf("setting .rodata after load: %v, want ErrReadOnly", err)
	}
	if !me.Variables.TargetTgid.ReadOnly() || me.Variables.Calls.ReadOnly() {
		t.Errorf("ReadOnly: target_tgid (.rodata) %v, calls (.data) %v; want true, false",
			me.Variables.TargetTgid.ReadOnly(), me.Variables.Calls.ReadOnly())
	}
}
