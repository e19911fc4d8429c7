// Package ringbench measures how fast the consumers of a kernel ring
// buffer drain it: Serve with its record hook and with a Go callback, the
// skeleton's typed reader (Read and ReadInto), cilium/ebpf's reader (Read
// and ReadInto) and libbpf's ring_buffer__consume, from a C program
// compiled at bench time. A kernel program fills the buffer through
// BPF_PROG_TEST_RUN first, so that the producer is not the limit.
// BenchmarkSustained finds the highest rate Serve keeps up with, with no
// loss, while kernel programs write from both CPUs; make bench's table
// (internal/benchtable) ends with both.
//
// On a shared 2-core AMD EPYC host (load average near 12), medians of 5
// rotating rounds, ns a record at 64 bytes, three runs (the Serve lines
// of the code before in-place batches, in the same runs, in brackets):
//
//	serve-hook        61-191  (481-1216)  1.6-4.8x cilium Read (0.35-0.46x)
//	serve-callback    32-73   (491-988)
//	typed-Read        101                 (a copy per record in the runs before)
//	typed-ReadInto    24-45               0.90-1.21x cilium ReadInto
//	cilium-Read       289-314
//	cilium-ReadInto   26-54
//	libbpf            3.6-4.8
//
// No drain lost a record. The fastest rounds of ReadInto and cilium's
// ReadInto are within 2 ns of each other (15.7 and 14.5, 17.7 and 15.0,
// 23.3 and 28.8): both take a lock, copy the record out of the ring and
// are bound by the same memory traffic; ReadInto also decodes the value,
// cilium stores the consumer position per record. libbpf's consumer
// reads each record in place under no lock and calls a C function: the
// gap to it is the Go readers' lock and copy per record, and for Serve
// the hook's context copy and the translated program's per-run setup
// (stack, registers, map locks: about 20 ns), not the reading. At 256
// bytes the copies of the records dominate for every consumer but libbpf
// (which reads 16 of the bytes).
//
// Sustained, 64-byte records into an 8 MiB ring buffer from both CPUs
// while Serve's record hook reads them: 1.9 million records a second
// with no loss (1.2 million with the code before); at 2.0 million the
// producers counted 64,740 records with no room, which the end hook
// emitted to Go. Past that rate the two CPUs are shared by the producers,
// Serve and the rest of the machine.
package ringbench

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -type events=rec -cflags "-O2 -mcpu=v3 -I../skeltest/include" ringbench.bpf.c
