package weak

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// kernelConfig reads the running kernel's configuration, the oracle for
// the .kconfig externs.
func kernelConfig(t *testing.T) map[string]string {
	t.Helper()
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/boot/config-" + strings.TrimSpace(string(rel)))
	if err != nil {
		z, err := os.ReadFile("/proc/config.gz")
		if err != nil {
			t.Skip("no kernel configuration to compare with")
		}
		r, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		data = b.Bytes()
	}
	cfg := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			cfg[k] = v
		}
	}
	return cfg
}

func get(t *testing.T, v interface{ Get() (uint64, error) }) uint64 {
	t.Helper()
	x, err := v.Get()
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// loadWeak loads the object without the programs that read a strong
// extern no kernel has.
func loadWeak(t *testing.T) *WeakObjects {
	t.Helper()
	spec, err := LoadWeakSpec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Programs.ReadRequired.SetAutoload(false)
	spec.Programs.UserRequired.SetAutoload(false)
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objs.Close() })
	return objs
}

// TestWeakExterns loads the object (a strong extern the kernel lacks left
// out) and compares what its program reads with the kernel's
// configuration: present weak externs have their values, absent ones are
// zero, as with libbpf.
func TestWeakExterns(t *testing.T) {
	testenv.Kernel(t)
	cfg := kernelConfig(t)
	objs := loadWeak(t)
	if objs.OnProbe == nil {
		t.Fatal("the USDT program was not loaded")
	}
	if _, err := objs.ReadExterns.Run(&ebpf.RunOptions{Data: make([]byte, 64)}); err != nil {
		t.Fatal(err)
	}
	v := objs.Variables
	tri := map[string]uint64{"y": 1, "m": 2}
	hz, err := strconv.ParseUint(cfg["CONFIG_HZ"], 10, 64)
	if err != nil {
		t.Fatalf("CONFIG_HZ %q: %v", cfg["CONFIG_HZ"], err)
	}
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"CONFIG_BPF_SYSCALL", get(t, v.BpfSyscall), tri[cfg["CONFIG_BPF_SYSCALL"]]},
		{"CONFIG_BPF_JIT", get(t, v.BpfJit), tri[cfg["CONFIG_BPF_JIT"]]},
		{"CONFIG_HZ", get(t, v.Hz), hz},
		{"CONFIG_SKELGEN_ABSENT", get(t, v.Absent), 0},
		{"LINUX_SKELGEN_ABSENT", get(t, v.LinuxAbsent), 0},
		{"&skelgen_absent_ksym", get(t, v.KsymAbsent), 0},
		{"skelgen_absent_kfunc", get(t, v.KfuncAbsent), 0},
		// bpf_get_attach_cookie exists since 5.15; this kernel is newer.
		{"LINUX_HAS_BPF_COOKIE", get(t, v.HasCookie), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if cfg["CONFIG_BPF_SYSCALL"] != "y" {
		t.Errorf("kernel configuration: CONFIG_BPF_SYSCALL=%q on a kernel that loads BPF", cfg["CONFIG_BPF_SYSCALL"])
	}
	host, err := v.Hostname.Get()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Unquote(cfg["CONFIG_DEFAULT_HOSTNAME"])
	if got := string(bytes.TrimRight(host[:], "\x00")); got != want {
		t.Errorf("CONFIG_DEFAULT_HOSTNAME = %q, want %q", got, want)
	}
	syms, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, line := range strings.Split(string(syms), "\n") {
		if f := strings.Fields(line); len(f) == 3 && (f[2] == "_text" || f[2] == "_etext") {
			addr[f[2]], _ = strconv.ParseUint(f[0], 16, 64)
		}
	}
	if got, text := get(t, v.KsymPresent), addr["_text"]; got != text || text == 0 {
		t.Errorf("&_text = %#x, /proc/kallsyms says %#x", got, text)
	}
	if got, etext := get(t, v.ConstKsymPresent), addr["_etext"]; got != etext || etext == 0 {
		t.Errorf("&_etext (const void) = %#x, /proc/kallsyms says %#x", got, etext)
	}
	if got := get(t, v.ConstKsymAbsent); got != 0 {
		t.Errorf("&skelgen_absent_const (const void, weak) = %#x, want 0", got)
	}
	// Syscall wrappers: /proc/kallsyms lists the wrapped bpf(2) entry point.
	if goruntime.GOARCH == "amd64" {
		wrapper := uint64(0)
		if bytes.Contains(syms, []byte(" __x64_sys_bpf\n")) {
			wrapper = 1
		}
		if got := get(t, v.HasWrapper); got != wrapper {
			t.Errorf("LINUX_HAS_SYSCALL_WRAPPER = %d, want %d (from /proc/kallsyms)", got, wrapper)
		}
	}
	t.Logf("CONFIG_HZ %d, CONFIG_DEFAULT_HOSTNAME %q, &_text %#x", get(t, v.Hz), want, get(t, v.KsymPresent))
}

// TestStrongExternMissing: a strong .kconfig extern the kernel lacks fails
// the load, naming it.
func TestStrongExternMissing(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadWeak(nil)
	if err == nil {
		objs.Close()
		t.Fatal("loaded a program reading a CONFIG_ option no kernel has")
	}
	if !strings.Contains(err.Error(), "CONFIG_SKELGEN_REQUIRED") {
		t.Errorf("error does not name the extern: %v", err)
	}
	t.Log(err)
}

// TestUSDT builds a program with a USDT probe (its note written as
// sys/sdt.h writes it, with a semaphore), starts it, attaches the
// usdt.bpf.h program to the probe and reads the arguments the program saw:
// one in a register, one in memory.
func TestUSDT(t *testing.T) {
	testenv.Kernel(t)
	if goruntime.GOARCH != "amd64" {
		t.Skip("the test program's probe note is written for x86-64")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler for the probed program:", err)
	}
	bin := filepath.Join(t.TempDir(), "probed")
	if out, err := exec.Command(cc, "-O2", "-o", bin, filepath.Join("testdata", "probed.c")).CombinedOutput(); err != nil {
		t.Fatalf("building the probed program: %v\n%s", err, out)
	}
	objs := loadWeak(t)

	const fires = 5
	cmd := exec.Command(bin, strconv.Itoa(fires))
	start, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The program waits for the probe's semaphore, which the kernel sets
	// when it registers the uprobe, and then for a byte on its input: the
	// BPF program is attached only once Attach returns, and probes fired
	// before that reach no program.
	if _, err := objs.OnProbe.AttachTo(bin, "skelgen", "tick", 0); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	if _, err := start.Write([]byte{1}); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	start.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the probed program did not end: its semaphore was never set")
	}
	v := objs.Variables
	if got := get(t, v.UsdtCalls); got != fires {
		t.Errorf("%d probe hits, want %d", got, fires)
	}
	if got := int64(get(t, v.UsdtArg)); got != 7*fires {
		t.Errorf("first argument (a register) %d, want %d", got, 7*fires)
	}
	if got := int64(get(t, v.UsdtArg2)); got != -fires {
		t.Errorf("second argument (in memory, signed) %d, want %d", got, -fires)
	}
	if _, err := objs.OnProbe.AttachTo(bin, "skelgen", "no_such_probe", 0); err == nil || !strings.Contains(err.Error(), "no USDT probe skelgen:no_such_probe") {
		t.Errorf("attaching to a probe the binary lacks: %v", err)
	}
}

// TestUserExterns: user-space programs read the .kconfig externs as the
// kernel program of the same object reads them, beside the kernel and in
// process, in both engines; a strong extern no kernel has fails their
// load too, naming it.
func TestUserExterns(t *testing.T) {
	testenv.Kernel(t)
	kernel := loadWeak(t)
	if _, err := kernel.ReadExterns.Run(&ebpf.RunOptions{Data: make([]byte, 64)}); err != nil {
		t.Fatal(err)
	}
	v := kernel.Variables
	host, err := v.Hostname.Get()
	if err != nil {
		t.Fatal(err)
	}
	want := WeakExterns{
		BpfSyscall: get(t, v.BpfSyscall), BpfJit: get(t, v.BpfJit), Hz: get(t, v.Hz),
		Absent: get(t, v.Absent), LinuxAbsent: get(t, v.LinuxAbsent),
		HasCookie: get(t, v.HasCookie), HasWrapper: get(t, v.HasWrapper), Hostname: host,
	}
	if want.Hz == 0 || want.BpfSyscall == 0 {
		t.Fatalf("the kernel program read CONFIG_HZ %d, CONFIG_BPF_SYSCALL %d", want.Hz, want.BpfSyscall)
	}
	for _, inProcess := range []bool{false, true} {
		spec, err := LoadWeakSpec()
		if err != nil {
			t.Fatal(err)
		}
		spec.Programs.ReadRequired.SetAutoload(false)
		spec.Programs.UserRequired.SetAutoload(false)
		objs, err := spec.Load(&WeakLoadOptions{InProcess: inProcess})
		if err != nil {
			t.Fatal(err)
		}
		defer objs.Close()
		if !objs.UserExterns.Translated() {
			t.Error("user_externs is not translated")
		}
		var got WeakExterns
		if _, err := objs.UserExterns.Run(&got); err != nil {
			t.Fatal(err)
		}
		ctx := make([]byte, unsafe.Sizeof(got))
		if _, err := objs.UserExterns.Raw().Clone().Run(ctx); err != nil {
			t.Fatal(err)
		}
		interpreted := *(*WeakExterns)(unsafe.Pointer(&ctx[0]))
		for engine, got := range map[string]WeakExterns{"translated": got, "interpreted": interpreted} {
			if got != want {
				t.Errorf("in process %v, %s: the user program read %+v, the kernel program %+v", inProcess, engine, got, want)
			}
		}

		spec.Programs.UserRequired.SetAutoload(true)
		objs, err = spec.Load(&WeakLoadOptions{InProcess: inProcess})
		if err == nil {
			objs.Close()
			t.Errorf("in process %v: loaded a user program reading a CONFIG_ option no kernel has", inProcess)
		} else if !strings.Contains(err.Error(), "CONFIG_SKELGEN_REQUIRED") {
			t.Errorf("in process %v: error does not name the extern: %v", inProcess, err)
		}
	}
}
