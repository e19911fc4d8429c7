package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	ebpfasm "github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"

	"github.com/skelgen/skelgen/internal/testenv"
)

// requireKernel skips the test when BPF programs cannot be loaded, unless
// SKELGEN_REQUIRE_KERNEL=1 makes that a failure.
func requireKernel(t *testing.T) {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("SKELGEN_REQUIRE_KERNEL") == "1" {
		fail = t.Fatalf
	}
	if os.Geteuid() != 0 {
		fail("kernel BPF needs root (euid %d)", os.Geteuid())
		return
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		fail("kernel BPF: %v", err)
		return
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: ebpfasm.Instructions{
		ebpfasm.Mov.Imm(ebpfasm.R0, 0), ebpfasm.Return(),
	}})
	if err != nil {
		fail("kernel BPF: cannot load an XDP program: %v", err)
		return
	}
	defer p.Close()
	if _, err := p.Run(&ebpf.RunOptions{Data: make([]byte, 14)}); err != nil {
		fail("kernel BPF: BPF_PROG_TEST_RUN of XDP: %v", err)
	}
}

// Slots of the XDP wrapper (see wrapXDP).
const (
	wrapPrologue = 9 // slots before the program in the low-half variant
	wrapHigh     = 3 // extra slots of the high-half variant: ja, rsh, exit
)

// wrapXDP turns a conformance program (r1 = memory, r2 = its length) into an
// XDP program: the memory becomes the packet, a bounds check lets the
// verifier admit accesses to [data, data+len), and r2 gets len. The
// kernel returns r0 truncated to 32 bits (BPF_PROG_TEST_RUN's retval is a
// u32), so with high set every exit of the entry function jumps to an
// epilogue returning r0 >> 32 instead, giving the upper half in a second run.
func wrapXDP(prog []byte, memLen int, high bool) ([]byte, error) {
	insns, err := ebpfasm.AppendInstructions(nil, bytes.NewReader(prog), binary.LittleEndian, "linux")
	if err != nil {
		return nil, err
	}
	r0, r3 := ebpfasm.R0, ebpfasm.R3
	pre := append(testenv.XDPPacket(memLen), ebpfasm.Mov.Imm(r3, 0))
	epilogue := len(pre) + 1 // the rsh below
	if high {
		pre = append(pre,
			ebpfasm.Instruction{OpCode: ebpfasm.Ja.Op(ebpfasm.ImmSource), Offset: 2},
			ebpfasm.RSh.Imm(r0, 32),
			ebpfasm.Return(),
		)
		// The entry function ends where the first bpf-to-bpf callee starts;
		// its exits are the program's.
		slots := make([]int, len(insns)) // slot index of each instruction
		end, slot := len(prog)/8, 0
		for i, ins := range insns {
			slots[i] = slot
			slot += int(ins.Size() / 8)
		}
		for i, ins := range insns {
			if ins.IsFunctionCall() {
				end = min(end, slots[i]+1+int(ins.Constant))
			}
		}
		for i, ins := range insns {
			if ins.OpCode.JumpOp() == ebpfasm.Exit && slots[i] < end {
				rel := epilogue - (len(pre) + slots[i]) - 1
				insns[i] = ebpfasm.Instruction{OpCode: ebpfasm.Ja.Op(ebpfasm.ImmSource), Offset: int16(rel)}
			}
		}
	}
	var buf bytes.Buffer
	if err := append(pre, insns...).Marshal(&buf, binary.LittleEndian); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// kernelRun loads prog as XDP and runs it over a packet holding mem.
func kernelRun(prog, mem []byte) (uint32, error) {
	insns, err := ebpfasm.AppendInstructions(nil, bytes.NewReader(prog), binary.LittleEndian, "linux")
	if err != nil {
		return 0, err
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: insns})
	if err != nil {
		return 0, errRefused{err}
	}
	defer p.Close()
	// XDP test runs need at least an Ethernet header's 14 bytes; the
	// program only sees len(mem) of them through r2 and the bounds check.
	pkt := make([]byte, max(len(mem), 14))
	copy(pkt, mem)
	return p.Run(&ebpf.RunOptions{Data: pkt})
}

type errRefused struct{ error }

func (e errRefused) Unwrap() error { return e.error }

// usesHelper reports whether prog calls a helper by ID or through a
// register: the kernel's helpers of the same numbers are not the suite's.
func usesHelper(prog []byte) bool {
	for i := 0; i+8 <= len(prog); i += 8 {
		op, src := prog[i], prog[i+1]>>4
		if op == 0x85 && src == 0 || op == 0x8d {
			return true
		}
	}
	return false
}

// TestKernelDifferential runs every tests/ program with a result both in the
// kernel (XDP, BPF_PROG_TEST_RUN) and in skelgen's interpreter and compares
// all 64 bits of r0 (two kernel runs: low and high half). Programs the
// verifier refuses are counted, not compared.
func TestKernelDifferential(t *testing.T) {
	suite := suiteDir(t)
	requireKernel(t)
	var compared, equal, refused, helper, highBits int
	refusals := map[string]int{}
	for _, f := range dataFiles(t, filepath.Join(suite, "tests")) {
		c, err := ParseFile(f)
		if err != nil || !c.HasResult || c.HasError || len(c.Unknown) > 0 {
			continue
		}
		prog, err := c.Program()
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if usesHelper(prog) {
			helper++
			continue
		}
		want, err := Execute(prog, append([]byte(nil), c.Mem...), 0)
		if err != nil {
			t.Errorf("%s: interpreter: %v", c.Name, err)
			continue
		}
		var halves [2]uint32
		var refusedErr error
		for i, high := range []bool{false, true} {
			w, err := wrapXDP(prog, len(c.Mem), high)
			if err != nil {
				t.Errorf("%s: wrap: %v", c.Name, err)
				refusedErr = err
				break
			}
			halves[i], err = kernelRun(w, c.Mem)
			if err != nil {
				refusedErr = err
				break
			}
		}
		var r errRefused
		if errors.As(refusedErr, &r) {
			refused++
			refusals[firstLine(r.error.Error())]++
			t.Logf("%s: verifier refused: %v", c.Name, firstLine(r.error.Error()))
			continue
		}
		if refusedErr != nil {
			t.Errorf("%s: kernel run: %v", c.Name, refusedErr)
			continue
		}
		compared++
		got := uint64(halves[1])<<32 | uint64(halves[0])
		if got != want {
			t.Errorf("%s: kernel r0=%#x, interpreter r0=%#x (suite says %#x)", c.Name, got, want, c.Result)
			continue
		}
		equal++
		if got>>32 != 0 {
			highBits++
		}
	}
	t.Logf("kernel differential: compared %d, equal %d (%d with a non-zero upper half), verifier refused %d, skipped for helper calls %d",
		compared, equal, highBits, refused, helper)
	for why, n := range refusals {
		t.Logf("  refused %3d: %s", n, why)
	}
	if compared == 0 {
		t.Error("no program could be compared with the kernel")
	}
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		return s[:i]
	}
	return fmt.Sprint(s)
}
