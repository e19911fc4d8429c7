package tracing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// This kernel refuses fentry/fexit at load (EPERM); the skeleton's error
// must say what the kernel lacks. Where trampolines work, the programs must
// load and attach.
func TestFentryLoadError(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadTracing(nil)
	if err == nil {
		defer objs.Close()
		if err := objs.AttachAll(); err != nil {
			t.Fatal(err)
		}
		t.Log("this kernel loads fentry/fexit programs")
		return
	}
	t.Logf("load error: %v", err)
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("unexpected load error: %v", err)
	}
	if !strings.Contains(err.Error(), "fentry/fexit") || !strings.Contains(err.Error(), "trampolines") {
		t.Errorf("the load error does not explain the refusal: %v", err)
	}
}

// TestAutoloadFallback is the tool author's fallback: prefer fentry, and
// where the kernel refuses trampolines switch the fentry programs off
// before load and count the same calls from the tracepoint instead.
func TestAutoloadFallback(t *testing.T) {
	testenv.Kernel(t)
	spec, err := LoadTracingSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	spec.Programs.TpUnlinkat.SetAutoload(false)
	objs, err := spec.Load(nil)
	fentry := err == nil
	if err != nil {
		if !errors.Is(err, os.ErrPermission) {
			t.Fatalf("unexpected load error: %v", err)
		}
		t.Logf("fentry refused (%v); falling back to the tracepoint", err)
		spec.Programs.TpUnlinkat.SetAutoload(true)
		spec.Programs.EnterUnlinkat.SetAutoload(false)
		spec.Programs.ExitUnlinkat.SetAutoload(false)
		if objs, err = spec.Load(nil); err != nil {
			t.Fatal(err)
		}
	}
	defer objs.Close()
	if err := objs.AttachAll(); err != nil {
		t.Fatalf("AttachAll with disabled programs: %v", err)
	}
	if !fentry {
		if objs.EnterUnlinkat != nil || objs.TpUnlinkat == nil {
			t.Fatalf("disabled programs' fields: enter %v (want nil), tracepoint %v", objs.EnterUnlinkat, objs.TpUnlinkat)
		}
	}
	const unlinks = 3
	dir := t.TempDir()
	for i := range unlinks {
		name := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	counter := objs.Variables.TpEntries
	if fentry {
		counter = objs.Variables.Entries
	}
	n, err := counter.Get()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fentry %v: %d unlinkat calls seen", fentry, n)
	if n != unlinks {
		t.Errorf("counted %d unlinkat calls of this process, want %d", n, unlinks)
	}
	if !fentry {
		checkKernelVersion(t, objs)
	}
}

// checkKernelVersion compares the .kconfig extern LINUX_KERNEL_VERSION,
// declared as __u32 (a typedef), with the running kernel's release.
func checkKernelVersion(t *testing.T, objs *TracingObjects) {
	t.Helper()
	v, err := objs.Variables.SeenVersion.Get()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Skip("no /proc/sys/kernel/osrelease:", err)
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(string(rel), "%d.%d", &major, &minor); err != nil {
		t.Fatalf("osrelease %q: %v", rel, err)
	}
	t.Logf("LINUX_KERNEL_VERSION %#x, release %s", v, strings.TrimSpace(string(rel)))
	if v>>16 != major || v>>8&0xff != minor {
		t.Errorf("LINUX_KERNEL_VERSION %#x, want %d.%d.x", v, major, minor)
	}
}

// A program removed from the spec by hand is treated as disabled, not as
// a failed load.
func TestRemovedProgramIsDisabled(t *testing.T) {
	testenv.Kernel(t)
	spec, err := LoadTracingSpec()
	if err != nil {
		t.Fatal(err)
	}
	delete(spec.Spec.Programs, "enter_unlinkat")
	delete(spec.Spec.Programs, "exit_unlinkat")
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.ExitUnlinkat != nil {
		t.Error("a program removed from the spec has a field")
	}
}
