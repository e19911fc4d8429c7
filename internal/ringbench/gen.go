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
// On a shared 2-core AMD EPYC host (load average 4 to 7), medians of 5
// rotating rounds, ns a record at 64 bytes, seven runs; in brackets,
// typed-ReadInto with the reader before its seat and batch walk, in runs
// alternating with these:
//
//	serve-hook        74-135        1.3-3.1x cilium Read
//	serve-callback    30-47
//	typed-Read        40-96
//	typed-ReadInto    19-31 (18-43) 0.91-1.53x cilium ReadInto, median 1.19 (0.57-1.18, median 0.77)
//	cilium-Read       147-286
//	cilium-ReadInto   23-33
//	libbpf            4.0-9.7
//
// Six later runs on the same host at load 1 to 3: typed-ReadInto
// 1.16-1.42x cilium ReadInto, serve-hook 2.0-2.9x cilium Read.
//
// No drain lost a record. Between runs one consumer's median varies by
// up to 2x on this host, more than the gap between ReadInto and cilium's
// ReadInto, so two of the seven runs put ReadInto below 1.0x; in the
// fastest rounds it takes 11.8-26 ns, cilium 15.6-24.6. Per record,
// ReadInto takes the reader's seat with one compare-and-swap (cilium's
// takes a mutex and stores the consumer position with an exchange: three
// locked instructions), walks the records up to a producer position
// loaded once per batch, and copies Value as an E and the record into
// Raw (cilium copies once). libbpf's consumer reads each record in place
// under no lock and calls a C function: the gap to it is the Go readers'
// locked instructions and copies per record, and for Serve the hook's
// context copy and the translated program's per-run setup (stack,
// registers, map locks: about 20 ns), not the reading. Serve's lines
// were 481-1216 and 491-988 before in-place batches. At 256 bytes the
// copies of the records dominate for every consumer but libbpf (which
// reads 16 of the bytes).
//
// Sustained, 64-byte records into an 8 MiB ring buffer from both CPUs
// while Serve's record hook reads them: 1.9 million records a second
// with no loss (1.2 million with the code before); at 2.0 million the
// producers counted 64,740 records with no room, which the end hook
// emitted to Go. Past that rate the two CPUs are shared by the producers,
// Serve and the rest of the machine.
package ringbench

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -type events=rec -cflags "-O2 -mcpu=v3 -I../skeltest/include" ringbench.bpf.c
