package ubpf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

// host records what the user program passes to the host functions.
type host struct {
	now     uint64
	emitted map[string]uint64
	sample  UbpfSample
}

func (h *host) HostNow() uint64 { return h.now }

func (h *host) HostEmit(name string, v uint64) int32 {
	h.emitted[name] = v
	return 42
}

func (h *host) HostRecord(s *UbpfSample) {
	h.sample = *s
	s.Flags = 0x5a // written back into the program's stack
}

func newHost() *host { return &host{now: 123456789, emitted: map[string]uint64{}} }

// runReport runs the report program for pid and checks what every side
// saw; it returns the context.
func runReport(t *testing.T, objs *UbpfObjects, h *host, out *bytes.Buffer, pid uint32) UbpfReportCtx {
	t.Helper()
	ctx := UbpfReportCtx{Pid: pid}
	r0, err := objs.Report.Run(&ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r0 != 0x5a {
		t.Errorf("report returned %#x, want the flags the host wrote back (0x5a)", r0)
	}
	if ctx.Now != h.now {
		t.Errorf("ctx.Now = %d, want host_now's %d", ctx.Now, h.now)
	}
	if ctx.EmitRet != 42 {
		t.Errorf("ctx.EmitRet = %d, want host_emit's 42", ctx.EmitRet)
	}
	if h.emitted["count"] != ctx.Count {
		t.Errorf("host_emit got count=%d, ctx.Count = %d", h.emitted["count"], ctx.Count)
	}
	if h.sample.Value != ctx.Count || h.sample.Slot != 3 {
		t.Errorf("host_record got %+v, want value %d slot 3", h.sample, ctx.Count)
	}
	text := out.String()
	for _, want := range []string{"usecs", "distribution", "report done for"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	return ctx
}

// TestKernelAndUserPrograms: the kernel program counts getppid calls; the
// user program reads the kernel's maps and globals in process.
func TestKernelAndUserPrograms(t *testing.T) {
	testenv.Kernel(t)
	h := newHost()
	var out bytes.Buffer
	records := map[string]int64{}
	objs, err := LoadUbpf(&UbpfLoadOptions{Host: h, Output: &out, Records: func(n string, v int64) { records[n] = v }})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	// Only user programs use user_hist and the .rodata sections: they must
	// not exist in the kernel.
	for _, name := range []string{"user_hist", ".rodata", ".rodata.str1.1"} {
		if objs.Collection().Maps[name] != nil {
			t.Errorf("map %s was created in the kernel", name)
		}
	}
	if objs.UserHist.Raw() != nil || objs.Counts.Raw() == nil {
		t.Error("user_hist should be a user-space map and counts a kernel map")
	}
	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	const calls = 5
	for range calls {
		syscall.Getppid()
	}
	pid := uint32(os.Getpid())
	ctx := runReport(t, objs, h, &out, pid)
	if ctx.Seen != 1 || ctx.Count < calls {
		t.Errorf("user program saw count %d (seen %d), want >= %d from the kernel map", ctx.Count, ctx.Seen, calls)
	}
	if ctx.SharedHits < calls {
		t.Errorf("user program saw shared[0] = %d through the mmapped array, want >= %d", ctx.SharedHits, calls)
	}
	kh, err := objs.Variables.KernelHits.Get()
	if err != nil {
		t.Fatal(err)
	}
	if records["kernel_hits"] < calls || uint64(records["kernel_hits"]) > kh {
		t.Errorf("skelgen_emit kernel_hits = %d, .bss kernel_hits now %d", records["kernel_hits"], kh)
	}
	if !strings.Contains(out.String(), "calls, kernel_hits") {
		t.Errorf("skelgen_printf output missing:\n%s", out.String())
	}

	// A user program that faults or spins returns an error; the host and
	// the kernel maps go on.
	before, err := objs.Counts.Lookup(pid)
	if err != nil {
		t.Fatal(err)
	}
	checkBadPrograms(t, objs)
	syscall.Getppid()
	after, err := objs.Counts.Lookup(pid)
	if err != nil || after <= before {
		t.Errorf("kernel map after failed user runs: %d (was %d), %v", after, before, err)
	}
}

func checkBadPrograms(t *testing.T, objs *UbpfObjects) {
	t.Helper()
	_, err := objs.BadRead.Run(&UbpfReportCtx{})
	var me *UbpfMemoryError
	if !errors.As(err, &me) {
		t.Fatalf("bad_read: %v, want a *UbpfMemoryError", err)
	}
	if !strings.Contains(err.Error(), "context") {
		t.Errorf("bad_read error does not name the region: %v", err)
	}
	_, err = objs.Spin.Run(nil)
	if !errors.Is(err, UbpfErrBudget) {
		t.Fatalf("spin: %v, want ErrBudget", err)
	}
}

// TestInProcess runs the object without the kernel: every map is a
// user-space map, fed here from Go instead of by the kernel program.
func TestInProcess(t *testing.T) {
	h := newHost()
	var out bytes.Buffer
	objs, err := LoadUbpf(&UbpfLoadOptions{Host: h, InProcess: true, Output: &out, Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Collection() != nil || objs.Counts.Raw() != nil {
		t.Fatal("in-process load created kernel objects")
	}
	if _, err := objs.CountGetppid.Attach(); !errors.Is(err, UbpfErrInProcess) {
		t.Errorf("attaching a kernel program in process: %v, want ErrInProcess", err)
	}
	if err := objs.Counts.Put(77, 9); err != nil {
		t.Fatal(err)
	}
	if err := objs.Shared.Put(0, 4); err != nil {
		t.Fatal(err)
	}
	if err := objs.Variables.KernelHits.Set(11); err != nil {
		t.Fatal(err)
	}
	ctx := runReport(t, objs, h, &out, 77)
	if ctx.Seen != 1 || ctx.Count != 9 || ctx.SharedHits != 4 {
		t.Errorf("ctx = %+v, want seen 1, count 9, shared 4", ctx)
	}
	if !strings.Contains(out.String(), "pid 77: 9 calls, kernel_hits 11") {
		t.Errorf("printf output:\n%s", out.String())
	}
	// The user program filled user_hist; Go reads it through the typed map.
	var total uint64
	for i := range uint32(16) {
		v, err := objs.UserHist.Lookup(i)
		if err != nil {
			t.Fatal(err)
		}
		total += v
	}
	if total == 0 {
		t.Error("user_hist is empty after the run")
	}
	checkBadPrograms(t, objs)
	// Still usable after the failures.
	runReport(t, objs, h, &out, 77)
}

// TestTranslationAgrees runs each user program through its ahead-of-time
// translation (what Run uses) and through the interpreter, and compares
// return values, context writes, map effects and errors.
func TestTranslationAgrees(t *testing.T) {
	h := newHost()
	objs, err := LoadUbpf(&UbpfLoadOptions{Host: h, InProcess: true, Output: io.Discard, Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if !objs.Report.Translated() || !objs.BadRead.Translated() || !objs.Spin.Translated() {
		t.Fatal("the skeleton was generated without translations (-aot)")
	}
	objs.Counts.Put(5, 17)
	objs.Shared.Put(0, 3)

	hist := func() []uint64 {
		var out []uint64
		for i := range uint32(16) {
			v, _ := objs.UserHist.Lookup(i)
			out = append(out, v)
			objs.UserHist.Put(i, 0)
		}
		return out
	}
	interp := func(p interface{ Raw() *runtime.Program }, ctx *UbpfReportCtx) (uint64, error) {
		var b []byte
		if ctx != nil {
			b = unsafe.Slice((*byte)(unsafe.Pointer(ctx)), unsafe.Sizeof(*ctx))
		}
		return p.Raw().Run(b)
	}

	ctxA, ctxB := UbpfReportCtx{Pid: 5}, UbpfReportCtx{Pid: 5}
	r0A, errA := objs.Report.Run(&ctxA)
	histA := hist()
	r0B, errB := interp(objs.Report, &ctxB)
	histB := hist()
	if errA != nil || errB != nil || r0A != r0B || ctxA != ctxB || !slices.Equal(histA, histB) {
		t.Errorf("report: translation r0=%d ctx=%+v hist=%v err=%v; interpreter r0=%d ctx=%+v hist=%v err=%v",
			r0A, ctxA, histA, errA, r0B, ctxB, histB, errB)
	}

	_, errA = objs.BadRead.Run(&UbpfReportCtx{})
	_, errB = interp(objs.BadRead, &UbpfReportCtx{})
	var meA, meB *runtime.MemoryError
	if !errors.As(errA, &meA) || !errors.As(errB, &meB) || *meA != *meB {
		t.Errorf("bad_read: translation %v, interpreter %v", errA, errB)
	}
	_, errA = objs.Spin.Run(nil)
	_, errB = interp(objs.Spin, nil)
	if !errors.Is(errA, runtime.ErrBudget) || !errors.Is(errB, runtime.ErrBudget) {
		t.Errorf("spin: translation %v, interpreter %v", errA, errB)
	}
}

// TestAutoloadUser switches user-space programs off before load: their
// fields stay nil, the others run, and a disabled kernel program's field
// is nil too, rather than a program failing with ErrInProcess.
func TestAutoloadUser(t *testing.T) {
	spec, err := LoadUbpfSpec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Programs.Spin.SetAutoload(false)
	spec.Programs.BadRead.SetAutoload(false)
	spec.Programs.CountGetppid.SetAutoload(false)
	if spec.Programs.Spin.Autoload() || !spec.Programs.Report.Autoload() {
		t.Fatal("Autoload does not report what SetAutoload set")
	}
	h := newHost()
	objs, err := spec.Load(&UbpfLoadOptions{Host: h, InProcess: true, Output: io.Discard, Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Spin != nil || objs.BadRead != nil {
		t.Errorf("disabled user programs loaded: spin %v, bad_read %v", objs.Spin, objs.BadRead)
	}
	if objs.Report == nil {
		t.Fatal("report was not loaded")
	}
	if objs.CountGetppid != nil {
		t.Error("a disabled kernel program has a field")
	}
	if err := objs.AttachAll(); err != nil {
		t.Errorf("AttachAll does not skip the disabled program: %v", err)
	}
	if _, err := objs.Report.Run(&UbpfReportCtx{}); err != nil {
		t.Errorf("report after disabling others: %v", err)
	}
}

// mapHost is a host whose functions use maps the running program uses.
type mapHost struct {
	*host
	use func(what string)
}

func (h *mapHost) HostNow() uint64 {
	h.use("host_now")
	return h.host.HostNow()
}

// usingWriter is an Output writer that uses maps on every Write.
type usingWriter struct {
	bytes.Buffer
	use func(what string)
}

func (w *usingWriter) Write(p []byte) (int, error) {
	w.use("Output")
	return w.Buffer.Write(p)
}

// TestCallbacksUseMaps: the Output writer (skelgen_printf, the histogram,
// bpf_printk), the Records callback (skelgen_emit) and a host function
// read and update, through the typed API, the maps the running program
// uses, in the translation and in the interpreter: each run ends.
func TestCallbacksUseMaps(t *testing.T) {
	var objs *UbpfObjects
	calls := map[string]int{}
	use := func(what string) {
		calls[what]++
		if _, err := objs.UserHist.Lookup(1); err != nil {
			t.Errorf("%s: user_hist: %v", what, err)
		}
		if err := objs.Counts.Put(9, 1); err != nil {
			t.Errorf("%s: counts: %v", what, err)
		}
		if _, err := objs.Variables.KernelHits.Get(); err != nil {
			t.Errorf("%s: kernel_hits: %v", what, err)
		}
	}
	out := &usingWriter{use: use}
	objs, err := LoadUbpf(&UbpfLoadOptions{Host: &mapHost{newHost(), use}, InProcess: true, Output: out, Budget: 1 << 20,
		Records: func(string, int64) { use("Records") }})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	for _, engine := range []string{"translation", "interpreter"} {
		clear(calls)
		testenv.NoHang(t, "report run by the "+engine, time.Minute, func() {
			ctx := UbpfReportCtx{Pid: 9}
			var err error
			if engine == "translation" {
				_, err = objs.Report.Run(&ctx)
			} else {
				_, err = objs.Report.Raw().Run(unsafe.Slice((*byte)(unsafe.Pointer(&ctx)), unsafe.Sizeof(ctx)))
			}
			if err != nil {
				t.Errorf("%s: %v", engine, err)
			}
		})
		// skelgen_printf, the histogram's lines, bpf_printk.
		if calls["Output"] < 3 || calls["Records"] != 1 || calls["host_now"] != 1 {
			t.Errorf("%s: callbacks called %v", engine, calls)
		}
	}
}
