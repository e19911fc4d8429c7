package bridge

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skelgen/skelgen/internal/testenv"
)

// privilegeChild, when set, makes TestPrivilegeChild load (and attach) a
// tracepoint object and print the error: the test binary run as another
// user by TestPrivilegeErrors.
const privilegeChild = "SKELGEN_PRIVILEGE_CHILD"

func tracepointSpec() *ebpf.CollectionSpec {
	return &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"counts": {Name: "counts", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16},
		},
		Programs: map[string]*ebpf.ProgramSpec{
			"tp": {Name: "tp", Type: ebpf.TracePoint, SectionName: "tracepoint/syscalls/sys_enter_getpid", License: "GPL",
				Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}},
		},
	}
}

func TestPrivilegeChild(t *testing.T) {
	if os.Getenv(privilegeChild) == "" {
		t.Skip("run by TestPrivilegeErrors as another user")
	}
	s, err := Load(tracepointSpec(), nil, &LoadOptions{Output: io.Discard})
	if err != nil {
		os.Stdout.WriteString("load: " + err.Error() + "\n")
		return
	}
	defer s.Close()
	p, err := NewProgram(s, "tp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.attachTracepoint("syscalls", "sys_enter_getpid")
	if err == nil {
		os.Stdout.WriteString("attached\n")
		return
	}
	os.Stdout.WriteString("attach: " + err.Error() + "\n")
}

// TestPrivilegeErrors runs the test binary as nobody: with no capabilities,
// loading fails naming CAP_BPF and CAP_PERFMON (the kernel says only EPERM,
// and cilium/ebpf guesses MEMLOCK); with CAP_BPF and CAP_PERFMON, loading
// works and attaching the tracepoint fails on tracefs, root's, naming
// CAP_DAC_OVERRIDE.
func TestPrivilegeErrors(t *testing.T) {
	testenv.Kernel(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A copy nobody may run: the go tool's build directory is root's.
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bridge.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	run := func(caps ...uintptr) string {
		cmd := exec.Command(bin, "-test.run=^TestPrivilegeChild$", "-test.count=1")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), privilegeChild+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}, AmbientCaps: caps}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the test binary as nobody: %v\n%s", err, out)
		}
		return string(out)
	}

	out := run()
	t.Logf("no capabilities: %s", out)
	if !strings.Contains(out, "load: loading BPF maps and programs needs CAP_BPF and CAP_PERFMON") || !strings.Contains(out, "sudo") {
		t.Errorf("load as nobody: want an error naming CAP_BPF and CAP_PERFMON, got:\n%s", out)
	}

	const capBPFBit, capPerfmonBit = 39, 38
	out = run(capBPFBit, capPerfmonBit)
	t.Logf("CAP_BPF and CAP_PERFMON: %s", out)
	if !strings.Contains(out, "attach: ") || !strings.Contains(out, "needs CAP_DAC_OVERRIDE") {
		t.Errorf("attach as nobody with CAP_BPF and CAP_PERFMON: want an error naming CAP_DAC_OVERRIDE, got:\n%s", out)
	}
}

// TestExplainPrivilege: an EPERM is explained by the capabilities CapEff
// lacks, and only then; the explanation comes first.
func TestExplainPrivilege(t *testing.T) {
	status := filepath.Join(t.TempDir(), "status")
	old := procStatus
	procStatus = status
	defer func() { procStatus = old }()
	eperm := &os.SyscallError{Syscall: "bpf", Err: syscall.EPERM}
	for _, c := range []struct {
		capEff string
		want   string // "" for no explanation
	}{
		{"0000000000000000", "needs CAP_BPF and CAP_NET_ADMIN"},
		{"0000008000000000", "needs CAP_NET_ADMIN"}, // CAP_BPF
		{"0000000000200000", ""},                    // CAP_SYS_ADMIN
		{"0000008000001000", ""},                    // CAP_BPF, CAP_NET_ADMIN
	} {
		if err := os.WriteFile(status, []byte("Name:\tx\nCapEff:\t"+c.capEff+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := explainPrivilege(eperm, "loading", capBPF, capNetAdmin)
		if c.want == "" {
			if err != eperm {
				t.Errorf("CapEff %s: %v, want the error unchanged", c.capEff, err)
			}
			continue
		}
		if !strings.HasPrefix(err.Error(), "loading "+c.want) || !errors.Is(err, ErrPrivilege) || !errors.Is(err, os.ErrPermission) {
			t.Errorf("CapEff %s: %v, want %q wrapping ErrPrivilege and the EPERM", c.capEff, err, c.want)
		}
	}
	if err := explainPrivilege(errors.New("other"), "loading", capBPF); err.Error() != "other" {
		t.Errorf("a non-permission error was explained: %v", err)
	}
}
