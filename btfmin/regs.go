package btfmin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Register structs. libbpf's bpf_tracing.h reads a probe's registers
// (PT_REGS_PARM1, BPF_KPROBE, BPF_UPROBE, ...) through a struct that
// depends on the architecture named by -D__TARGET_ARCH_<arch>: struct
// pt_regs on x86, arm, mips and powerpc, struct user_pt_regs on arm64 and
// loongarch, the typedef user_pt_regs on s390 and struct user_regs_struct
// on riscv. One kernel BTF holds one architecture's, so a header that
// serves several targets (Config.Arches) declares each architecture's in
// a section of its own, guarded by its __TARGET_ARCH_ macro: the kernel
// BTF's architecture from the kernel BTF, whole, every other as its
// kernel defines it (member names and order), in regDecls.

// regDecl is one register declaration of an architecture.
type regDecl struct {
	key  string // declKey: "struct pt_regs", "typedef user_pt_regs"
	text string // its C declaration, when the kernel BTF lacks it
}

// regDecls lists, per Linux architecture (the __TARGET_ARCH_ suffix), the
// register declarations bpf_tracing.h reads, as that architecture's kernel
// declares them. unsigned long is the kernel's word: CO-RE relocates each
// member's offset and size to the running kernel's, so the 32-bit
// architectures' narrower words are taken care of at load time, as are
// members a kernel configuration adds (mips' pad0 on 32-bit kernels,
// powerpc's tail after result).
var regDecls = map[string][]regDecl{
	// arch/x86/include/asm/ptrace.h (64-bit; since Linux 6.9 cs and ss
	// share a union with csx/fred_cs and ssx/fred_ss).
	"x86": {{"struct pt_regs", `struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
};
`}},
	// arch/arm/include/asm/ptrace.h
	"arm": {{"struct pt_regs", `struct pt_regs {
	unsigned long uregs[18];
};
`}},
	// arch/arm64/include/uapi/asm/ptrace.h
	"arm64": {{"struct user_pt_regs", `struct user_pt_regs {
	unsigned long long regs[31];
	unsigned long long sp;
	unsigned long long pc;
	unsigned long long pstate;
};
`}},
	// arch/loongarch/include/uapi/asm/ptrace.h
	"loongarch": {{"struct user_pt_regs", `struct user_pt_regs {
	unsigned long regs[32];
	unsigned long orig_a0;
	unsigned long csr_era;
	unsigned long csr_badv;
	unsigned long reserved[10];
};
`}},
	// arch/mips/include/asm/ptrace.h (64-bit, without the members of
	// CONFIG_CPU_HAS_SMARTMIPS and CONFIG_CPU_CAVIUM_OCTEON).
	"mips": {{"struct pt_regs", `struct pt_regs {
	unsigned long regs[32];
	unsigned long cp0_status;
	unsigned long hi;
	unsigned long lo;
	unsigned long cp0_badvaddr;
	unsigned long cp0_cause;
	unsigned long cp0_epc;
};
`}},
	// arch/powerpc/include/uapi/asm/ptrace.h and asm/ptrace.h (64-bit).
	"powerpc": {{"struct user_pt_regs", `struct user_pt_regs {
	unsigned long gpr[32];
	unsigned long nip;
	unsigned long msr;
	unsigned long orig_gpr3;
	unsigned long ctr;
	unsigned long link;
	unsigned long xer;
	unsigned long ccr;
	unsigned long softe;
	unsigned long trap;
	unsigned long dar;
	unsigned long dsisr;
	unsigned long result;
};
`}, {"struct pt_regs", `struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			unsigned long gpr[32];
			unsigned long nip;
			unsigned long msr;
			unsigned long orig_gpr3;
			unsigned long ctr;
			unsigned long link;
			unsigned long xer;
			unsigned long ccr;
			unsigned long softe;
			unsigned long trap;
			union {
				unsigned long dar;
				unsigned long dear;
			};
			union {
				unsigned long dsisr;
				unsigned long esr;
			};
			unsigned long result;
		};
	};
};
`}},
	// arch/riscv/include/uapi/asm/ptrace.h
	"riscv": {{"struct user_regs_struct", `struct user_regs_struct {
	unsigned long pc;
	unsigned long ra;
	unsigned long sp;
	unsigned long gp;
	unsigned long tp;
	unsigned long t0;
	unsigned long t1;
	unsigned long t2;
	unsigned long s0;
	unsigned long s1;
	unsigned long a0;
	unsigned long a1;
	unsigned long a2;
	unsigned long a3;
	unsigned long a4;
	unsigned long a5;
	unsigned long a6;
	unsigned long a7;
	unsigned long s2;
	unsigned long s3;
	unsigned long s4;
	unsigned long s5;
	unsigned long s6;
	unsigned long s7;
	unsigned long s8;
	unsigned long s9;
	unsigned long s10;
	unsigned long s11;
	unsigned long t3;
	unsigned long t4;
	unsigned long t5;
	unsigned long t6;
};
`}},
	// arch/s390/include/uapi/asm/ptrace.h
	"s390": {{"typedef user_pt_regs", `typedef struct {
	unsigned long mask;
	unsigned long addr;
} psw_t;

typedef struct {
	unsigned long args[1];
	psw_t psw;
	unsigned long gprs[16];
} user_pt_regs;
`}},
}

// Arches are the architectures the header can serve (Config.Arches).
func Arches() []string {
	var out []string
	for a := range regDecls {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// isRegKey reports whether k names a register declaration of some
// architecture.
func isRegKey(k string) bool {
	return slices.Contains(regKeys, k)
}

// regKeys are the declarations of regDecls, and perfRegsKey.
var regKeys = []string{"struct pt_regs", "struct user_pt_regs", "typedef user_pt_regs", "struct user_regs_struct", perfRegsKey}

// perfRegsKey is bpf_user_pt_regs_t, the registers of a perf_event
// program's context (struct bpf_perf_event_data's regs, by value): each
// architecture's own, so it goes in the register sections too.
const perfRegsKey = "typedef bpf_user_pt_regs_t"

// perfRegs is what bpf_user_pt_regs_t names on each architecture
// (arch/*/include/uapi/asm/bpf_perf_event.h; asm-generic's struct pt_regs
// where the architecture has none).
var perfRegs = map[string]string{
	"x86": "struct pt_regs", "arm": "struct pt_regs", "mips": "struct pt_regs",
	"arm64": "struct user_pt_regs", "loongarch": "struct user_pt_regs", "powerpc": "struct user_pt_regs",
	"riscv": "struct user_regs_struct", "s390": "user_pt_regs",
}

// archMarks are members of struct pt_regs only one architecture's kernel
// has: they tell which architecture a kernel BTF is of.
var archMarks = map[string]string{
	"orig_ax":   "x86",
	"uregs":     "arm",
	"orig_x0":   "arm64",
	"csr_era":   "loongarch",
	"cp0_epc":   "mips",
	"orig_gpr3": "powerpc",
	"epc":       "riscv",
	"orig_gpr2": "s390",
}

// kernelArch returns the architecture of the first kernel BTF whose
// struct pt_regs shows one, or "".
func kernelArch(kernels []*btf.Spec) string {
	for _, spec := range kernels {
		var regs *btf.Struct
		if err := spec.TypeByName("pt_regs", &regs); err != nil {
			continue
		}
		var found string
		// Each type once: malformed BTF can loop, or share types
		// between anonymous members (the chooser reports it).
		seen := map[btf.Type]bool{}
		var walk func(t btf.Type)
		walk = func(t btf.Type) {
			if seen[t] {
				return
			}
			seen[t] = true
			for _, m := range members(t) {
				if m.Name == "" {
					walk(btf.UnderlyingType(m.Type))
				} else if a, ok := archMarks[m.Name]; ok && found == "" {
					found = a
				}
			}
		}
		walk(regs)
		if found != "" {
			return found
		}
	}
	return ""
}

// setArches makes the header serve arches: the kernel BTF's own register
// declarations are kept whole once registers are asked for.
func (c *chooser) setArches(arches []string) error {
	for _, a := range arches {
		if regDecls[a] == nil {
			return fmt.Errorf("architecture %q: not one of %s", a, strings.Join(Arches(), ", "))
		}
	}
	c.arches = slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(arches)))))
	if len(c.arches) == 0 {
		return nil
	}
	c.kernelArch = kernelArch(c.kernels)
	for t := range c.keep {
		if isRegKey(declKey(t)) {
			c.wantRegisters()
			break
		}
	}
	return nil
}

// wantRegisters notes that the source reads registers: the header gets
// the register sections, with the kernel's declarations whole.
func (c *chooser) wantRegisters() {
	if len(c.arches) == 0 || c.regs {
		return
	}
	c.regs = true
	if !slices.Contains(c.arches, c.kernelArch) {
		return
	}
	for _, d := range regDecls[c.kernelArch] {
		if t, err := c.kernelType(d.key); err == nil {
			c.use(t, true)
		}
	}
}

// kernelMark follows the #if of the section that comes from the kernel
// BTF; HeaderSpec compiles a header for that architecture.
const kernelMark = " /* from the kernel BTF */"

var reKernelSection = regexp.MustCompile(`(?m)^#(?:el)?if defined\(__TARGET_ARCH_(\w+)\)` + regexp.QuoteMeta(kernelMark) + `$`)

// registersHere writes the register sections into the body where a
// definition about to be written depends on a register declaration (when
// the header has register sections): after what the kernel BTF's
// declarations depend on, before the definition. Otherwise they come
// after everything else.
func (w *writer) registersHere() {
	if w.regsDone || len(w.c.arches) == 0 {
		return
	}
	w.regsDone = true
	w.c.regs = true
	for _, d := range regDecls[w.c.kernelArch] {
		if t := w.lookup(d.key); t != nil {
			for _, dep := range w.depsOf(t) {
				w.emit(dep)
			}
		}
	}
	w.writeRegisters(&w.body)
}

// writeRegisters writes the register sections, after everything else, in
// a chain of #if defined(__TARGET_ARCH_<arch>): the kernel BTF's
// architecture from its types (rendered by w), the others from regDecls.
// A compile without any __TARGET_ARCH_ macro sees none.
func (w *writer) writeRegisters(out *strings.Builder) {
	if !w.c.regs {
		return
	}
	out.WriteString("/* Registers as bpf_tracing.h reads them, one section per -D__TARGET_ARCH_<arch>. */\n")
	for i, a := range w.c.arches {
		kw := "#elif"
		if i == 0 {
			kw = "#if"
		}
		mark := ""
		if a == w.c.kernelArch {
			mark = kernelMark
		}
		fmt.Fprintf(out, "%s defined(__TARGET_ARCH_%s)%s\n\n", kw, a, mark)
		for _, d := range regDecls[a] {
			if t := w.lookup(d.key); a == w.c.kernelArch && t != nil {
				out.WriteString(w.definition(t))
				continue
			}
			out.WriteString(d.text + "\n")
		}
		if w.c.defs[perfRegsKey] != nil {
			// Written from perfRegs for every architecture: the object
			// the chooser reads may have been compiled for another.
			fmt.Fprintf(out, "typedef %s bpf_user_pt_regs_t;\n\n", perfRegs[a])
		}
	}
	out.WriteString("#endif\n\n")
}
