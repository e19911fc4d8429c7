package testenv

import (
	"os"
	"os/exec"
	goruntime "runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

const bpffsMagic = 0xcafe4a11

func isBPFFS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && uint32(st.Type) == bpffsMagic
}

func mountBPFFS(path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	return unix.Mount("bpf", path, "bpf", 0, "")
}

const tracefsMagic = 0x74726163

func ensureTracefs() error {
	const path = "/sys/kernel/tracing"
	var st unix.Statfs_t
	if unix.Statfs(path, &st) == nil && uint32(st.Type) == tracefsMagic {
		return nil
	}
	return unix.Mount("tracefs", path, "tracefs", 0, "")
}

// freshBootScript unmounts tracefs and debugfs (both mount points of
// tracefs, and debugfs above one of them), fails with status 99 if one is
// still mounted, and runs its arguments.
const freshBootScript = `for d in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do
	while umount "$d" 2>/dev/null; do :; done
done
if grep -qE ' (tracefs|debugfs) ' /proc/self/mounts; then
	echo "tracefs or debugfs is still mounted" >&2
	exit 99
fi
exec "$@"`

// FreshBoot makes cmd run as on a machine just booted, where nothing has
// mounted tracefs or debugfs yet: in a mount namespace of its own, private
// (what the command mounts or unmounts does not reach the host), with both
// unmounted. It needs root; the command exits with status 99 if they
// could not be unmounted.
func FreshBoot(cmd *exec.Cmd) {
	inNamespace(cmd, freshBootScript)
}

// Tracefs mounts tracefs for a test that attaches tracepoints through
// cilium/ebpf directly (skelgen's skeletons mount it themselves).
func Tracefs(t testing.TB) {
	t.Helper()
	if err := ensureTracefs(); err != nil {
		skipOrFail(t, "SKELGEN_REQUIRE_KERNEL", "cannot mount tracefs: "+err.Error())
	}
}

// hideKernelBTFScript mounts an empty tmpfs over /sys/kernel/btf, fails
// with status 99 if the kernel's BTF is still there, and runs its
// arguments.
const hideKernelBTFScript = `mount -t tmpfs skelgen-no-btf /sys/kernel/btf || exit 99
if [ -e /sys/kernel/btf/vmlinux ]; then
	echo "/sys/kernel/btf/vmlinux is still there" >&2
	exit 99
fi
exec "$@"`

// HideKernelBTF makes cmd run as on a kernel built without BTF: in a
// private mount namespace of its own where an empty tmpfs hides
// /sys/kernel/btf (vmlinux and the modules' BTF). It needs root; the
// command exits with status 99 if the BTF could not be hidden.
func HideKernelBTF(cmd *exec.Cmd) {
	inNamespace(cmd, hideKernelBTFScript)
}

// inNamespace makes cmd run through the shell script, which ends by
// running its arguments, in a private mount namespace.
func inNamespace(cmd *exec.Cmd, script string) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		sh = "/bin/sh"
	}
	args := append([]string{"sh", "-c", script, "sh", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sh, args
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Go makes / private, recursively, in the new namespace.
	cmd.SysProcAttr.Unshareflags |= syscall.CLONE_NEWNS
}

// OnCPU runs f on a thread of the process bound to cpu alone, with the
// thread's id, and returns the thread to the CPUs it had: a kernel
// program f runs with BPF_PROG_TEST_RUN then sees that CPU's per-CPU
// values and get_smp_processor_id.
func OnCPU(cpu int, f func(tid int)) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return err
	}
	defer unix.SchedSetaffinity(0, &old)
	f(unix.Gettid())
	return nil
}

// Clocks reads CLOCK_MONOTONIC and CLOCK_BOOTTIME in nanoseconds, the
// clocks of bpf_ktime_get_ns and bpf_ktime_get_boot_ns.
func Clocks() (mono, boot uint64) {
	var m, b unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &b)
	return uint64(m.Nano()), uint64(b.Nano())
}
