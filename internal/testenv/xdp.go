package testenv

import ebpfasm "github.com/cilium/ebpf/asm"

// XDPPacket returns the start of an XDP program that runs code written for
// r1 = memory of n bytes, r2 = n: r1 becomes the packet's start once a
// bounds check (the program returns 0 on a shorter packet) lets the
// verifier admit accesses to its first n bytes, and r2 = n.
func XDPPacket(n int) ebpfasm.Instructions {
	r0, r1, r2, r3 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3
	return ebpfasm.Instructions{
		ebpfasm.LoadMem(r2, r1, 4, ebpfasm.Word), // data_end
		ebpfasm.LoadMem(r1, r1, 0, ebpfasm.Word), // data
		ebpfasm.Mov.Reg(r3, r1),
		ebpfasm.Add.Imm(r3, int32(n)),
		{OpCode: ebpfasm.JLE.Op(ebpfasm.RegSource), Dst: r3, Src: r2, Offset: 2},
		ebpfasm.Mov.Imm(r0, 0),
		ebpfasm.Return(),
		ebpfasm.Mov.Imm(r2, int32(n)),
	}
}
