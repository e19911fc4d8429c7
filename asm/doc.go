// Package asm assembles the textual eBPF dialect of the bpf_conformance suite
// (the "ubpf assembly" of the *.data test files) into instruction bytes.
//
// The dialect is line oriented. A line holds an optional label ("name:"), an
// optional instruction and an optional comment starting with '#' or ';'.
// Registers are written %r0..%r10, memory operands [%rN], [%rN+off] or
// [%rN-off], immediates in decimal or 0x-hexadecimal. Mnemonics follow the
// suite's naming: an ALU or jump mnemonic without suffix is the 64-bit form
// ("add", "add64"), a "32" suffix selects the 32-bit class ("add32",
// "jeq32"); "lock [fetch] OP [mem], %rS" writes atomics; "lddw %rD, map:N" loads
// the handle of the program's map N and "lddw %rD, value:N+OFF" the address
// of its value plus OFF (a global variable), as the kernel's
// BPF_PSEUDO_MAP_IDX and BPF_PSEUDO_MAP_IDX_VALUE sources; "call N" calls a
// helper by ID, "call %rN" is callx and "call local LABEL" is a bpf-to-bpf
// call. Jump targets are labels or signed slot offsets ("+3", "-2"). As in
// the suite's reference assembler, "exit" is an implicit label naming the
// first exit instruction.
//
// The output is the program as 8-byte instruction slots (lddw takes two),
// little endian by default. Every error is an *Error naming the line, the
// column and the offending token, so a broken test file is easy to fix.
//
// Immediates are checked against the field they land in: decimal values must
// fit the signed field (imm32: -2^31..2^31-1, offsets: -2^15..2^15-1);
// hexadecimal values are bit patterns and must fit the field's width
// (0xffffffff is -1 as an imm32, 0x100000000 is an error). lddw takes any
// value that fits 64 bits.
package asm
