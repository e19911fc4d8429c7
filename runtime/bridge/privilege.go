package bridge

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
)

// capability is a Linux capability: its bit in the capability sets and its
// name.
type capability struct {
	bit  uint
	name string
}

var (
	capDACOverride = capability{1, "CAP_DAC_OVERRIDE"}
	capNetAdmin    = capability{12, "CAP_NET_ADMIN"}
	capSysAdmin    = capability{21, "CAP_SYS_ADMIN"}
	capPerfmon     = capability{38, "CAP_PERFMON"}
	capBPF         = capability{39, "CAP_BPF"}
)

// procStatus is the file effectiveCaps reads; a variable for tests.
var procStatus = "/proc/self/status"

// effectiveCaps returns the process's effective capabilities (CapEff of
// /proc/self/status); ok is false where there is no such file.
func effectiveCaps() (caps uint64, ok bool) {
	b, err := os.ReadFile(procStatus)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "CapEff:"); found {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return caps, err == nil
		}
	}
	return 0, false
}

// lacking returns the names of the capabilities of need that eff lacks.
// CAP_SYS_ADMIN stands in for CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN, as
// the kernel lets it.
func lacking(eff uint64, need []capability) []string {
	has := func(c capability) bool { return eff&(1<<c.bit) != 0 }
	var out []string
	for _, c := range need {
		// tracefs is root's: another user needs CAP_DAC_OVERRIDE.
		if has(c) || c != capDACOverride && has(capSysAdmin) || c == capDACOverride && os.Geteuid() == 0 {
			continue
		}
		out = append(out, c.name)
	}
	return out
}

// explainPrivilege adds to an EPERM or EACCES error of doing what the
// capabilities it needs that the process lacks, from its effective
// capabilities; other errors, and errors of a process that has them all,
// are returned as they are.
func explainPrivilege(err error, what string, need ...capability) error {
	if !errors.Is(err, os.ErrPermission) {
		return err
	}
	eff, ok := effectiveCaps()
	if !ok {
		return err
	}
	missing := lacking(eff, need)
	if len(missing) == 0 {
		return err
	}
	// The cause first: cilium/ebpf's own message may guess another
	// (MEMLOCK), which the kernel's errno cannot tell apart.
	memlock := ""
	if strings.Contains(err.Error(), "MEMLOCK") {
		memlock = ", not MEMLOCK"
	}
	return fmt.Errorf("%s needs %s, which this process lacks; run it as root with sudo, or grant them (%w%s): %w",
		what, strings.Join(missing, " and "), ErrPrivilege, memlock, err)
}

// ErrPrivilege is wrapped by errors of loading or attaching that the
// process lacked the capabilities for; the message names them.
var ErrPrivilege = errors.New("the cause is a missing privilege")

// loadCapabilities are the capabilities loading spec needs: CAP_BPF for
// maps and programs (where unprivileged BPF is disabled, as it is by
// default), CAP_PERFMON for tracing programs, CAP_NET_ADMIN for networking
// ones.
func loadCapabilities(spec *ebpf.CollectionSpec) []capability {
	need := []capability{capBPF}
	var perfmon, netAdmin bool
	for _, p := range spec.Programs {
		switch p.Type {
		case ebpf.Kprobe, ebpf.TracePoint, ebpf.PerfEvent, ebpf.RawTracepoint, ebpf.RawTracepointWritable, ebpf.Tracing, ebpf.LSM, ebpf.StructOps, ebpf.Extension:
			perfmon = true
		case ebpf.SchedCLS, ebpf.SchedACT, ebpf.XDP, ebpf.LWTIn, ebpf.LWTOut, ebpf.LWTXmit, ebpf.LWTSeg6Local, ebpf.SkSKB, ebpf.SkMsg,
			ebpf.FlowDissector, ebpf.CGroupDevice, ebpf.CGroupSock, ebpf.CGroupSockAddr, ebpf.CGroupSockopt, ebpf.CGroupSysctl, ebpf.SockOps, ebpf.Netfilter:
			netAdmin = true
		}
	}
	if perfmon {
		need = append(need, capPerfmon)
	}
	if netAdmin {
		need = append(need, capNetAdmin)
	}
	return need
}
