package aot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	ebpfasm "github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

// The maps of the "kernel" setup, by index; testdata/harness.go.in makes
// the same ones.
const (
	mapRodata = iota
	mapRB
	mapArr
	mapHash
	mapPCArr
	mapPCHash
	mapLRU
	mapNPHash
	mapLRUPC
)

func kernelMapSpecs(rodata int) []runtime.MapSpec {
	return []runtime.MapSpec{
		{Name: ".rodata", Type: runtime.Array, KeySize: 4, ValueSize: uint32(rodata), MaxEntries: 1},
		{Name: "rb", Type: runtime.RingBuf, MaxEntries: 1 << 14},
		{Name: "arr", Type: runtime.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		{Name: "hash", Type: runtime.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		{Name: "pcarr", Type: runtime.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		{Name: "pchash", Type: runtime.PerCPUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		{Name: "lru", Type: runtime.LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4},
		{Name: "nphash", Type: runtime.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4, Flags: runtime.FlagNoPrealloc},
		{Name: "lrupc", Type: runtime.LRUPerCPUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4},
	}
}

// kcase is one program of the helper differential test. Its body runs
// with r1 = the packet (mem) and r2 = its length, in the kernel as XDP
// (wrapKernel) and in skelgen's engines as a user program; lddw of a map
// (PseudoMapFD) or of a map value (PseudoMapValue) names the map by its
// index in kernelMapSpecs. The program writes what it sees into the packet.
type kcase struct {
	name   string
	body   ebpfasm.Instructions
	rodata []byte
	mem    []byte
	// hashed marks an snprintf case whose output holds a pointer the
	// kernel hashes: its hex digits are not compared, only its shape.
	hashed bool
	// marker starts the format of a trace_printk case, so that its lines
	// are told from others' in the kernel's trace buffer.
	marker string
	// vary checks the words of the packet that differ from run to run
	// (times, random numbers, the thread's id) against what env knows
	// of the run and replaces each by 1 when it holds, so runs compare.
	vary func(mem []byte, env runEnv)
}

// runEnv is what the test knows of a run: the clocks before and after it
// and the process and thread that ran it (0 when not known).
type runEnv struct {
	pid, tid   int
	mono, boot [2]uint64
}

// clocks reads the clocks into mono[i] and boot[i].
func (e *runEnv) clocks(i int) { e.mono[i], e.boot[i] = testenv.Clocks() }

// kresult is what a program did: refused at load, or its r0 (the low 32
// bits, as BPF_PROG_TEST_RUN returns), packet, ring buffer records, the
// entries of the maps after the ring buffer (see canonMaps) and the
// lines of trace_printk text that hold the case's marker.
type kresult struct {
	refused bool
	why     string // why it was refused (the verifier's error and last lines); not compared
	r0      uint32
	mem     string
	records string
	maps    string
	trace   string
}

func (r kresult) same(o kresult) bool {
	r.why, o.why = "", ""
	return r == o
}

func (r kresult) String() string {
	if r.refused {
		return "refused at load: " + r.why
	}
	return fmt.Sprintf("r0=%#x records=[%s]\nmem=%s\nmaps=%s\ntrace=%q", r.r0, r.records, r.mem, r.maps, r.trace)
}

// copyWords copies n bytes (a multiple of 8) from src+soff to dst+doff
// through r1: the helpers tested here may not reach the packet, so their
// memory is on the stack.
func copyWords(dst ebpfasm.Register, doff int, src ebpfasm.Register, soff, n int) ebpfasm.Instructions {
	var p ebpfasm.Instructions
	for i := 0; i < n; i += 8 {
		p = append(p, ebpfasm.LoadMem(ebpfasm.R1, src, int16(soff+i), ebpfasm.DWord), ebpfasm.StoreMem(dst, int16(doff+i), ebpfasm.R1, ebpfasm.DWord))
	}
	return p
}

func mapPtr(dst ebpfasm.Register, i int) ebpfasm.Instruction {
	return ebpfasm.Instruction{OpCode: ebpfasm.LoadImmOp(ebpfasm.DWord), Dst: dst, Src: ebpfasm.PseudoMapFD, Constant: int64(i)}
}

func mapValue(dst ebpfasm.Register, i, off int) ebpfasm.Instruction {
	return ebpfasm.Instruction{OpCode: ebpfasm.LoadImmOp(ebpfasm.DWord), Dst: dst, Src: ebpfasm.PseudoMapValue, Constant: int64(off)<<32 | int64(i)}
}

// wrapKernel makes body an XDP program over a packet of n bytes: r1 the
// packet's start once a bounds check lets the verifier admit accesses to
// it, r2 = n; map references get the kernel maps' descriptors.
func wrapKernel(body ebpfasm.Instructions, n int, maps []*ebpf.Map) ebpfasm.Instructions {
	out := testenv.XDPPacket(n)
	for _, in := range body {
		if in.OpCode.IsDWordLoad() && (in.Src == ebpfasm.PseudoMapFD || in.Src == ebpfasm.PseudoMapValue) {
			fd := maps[int32(in.Constant)].FD()
			in.Constant = in.Constant&^0xffffffff | int64(uint32(fd))
		}
		out = append(out, in)
	}
	return out
}

func runKernel(t *testing.T, c kcase) kresult {
	t.Helper()
	var maps []*ebpf.Map
	defer func() {
		for _, m := range maps {
			m.Close()
		}
	}()
	for i, s := range kernelMapSpecs(len(c.rodata)) {
		spec := &ebpf.MapSpec{Type: ebpf.MapType(s.Type), KeySize: s.KeySize, ValueSize: s.ValueSize, MaxEntries: s.MaxEntries, Flags: s.Flags}
		if i == mapRodata {
			spec.Flags = runtime.FlagRdonlyProg
			spec.Contents = []ebpf.MapKV{{Key: uint32(0), Value: c.rodata}}
		}
		m, err := ebpf.NewMap(spec)
		if err != nil {
			t.Fatalf("%s: kernel map %s: %v", c.name, s.Name, err)
		}
		maps = append(maps, m)
		if i == mapRodata {
			if err := m.Freeze(); err != nil {
				t.Fatalf("%s: freeze: %v", c.name, err)
			}
		}
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: wrapKernel(c.body, len(c.mem), maps)})
	if err != nil {
		var ve *ebpf.VerifierError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: kernel load: %v", c.name, err)
		}
		return kresult{refused: true, why: fmt.Sprintf("%v %v", ve.Cause, ve.Log[max(len(ve.Log)-3, 0):])}
	}
	defer p.Close()
	out := make([]byte, len(c.mem))
	var r0 uint32
	env := runEnv{pid: os.Getpid()}
	// On CPU 0, the one CPU of the runtime's per-CPU maps.
	cpuErr := testenv.OnCPU(0, func(tid int) {
		env.tid = tid
		env.clocks(0)
		r0, err = p.Run(&ebpf.RunOptions{Data: c.mem, DataOut: out})
		env.clocks(1)
	})
	if cpuErr != nil {
		t.Fatalf("%s: %v", c.name, cpuErr)
	}
	if err != nil {
		t.Fatalf("%s: BPF_PROG_TEST_RUN: %v", c.name, err)
	}
	rd, err := ringbuf.NewReader(maps[mapRB])
	if err != nil {
		t.Fatalf("%s: ring buffer reader: %v", c.name, err)
	}
	defer rd.Close()
	rd.SetDeadline(time.Now())
	var recs []byte
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		recs = fmt.Appendf(recs, "%d:%x ", len(rec.RawSample), rec.RawSample)
	}
	if c.vary != nil {
		c.vary(out, env)
	}
	res := kresult{r0: r0, mem: hex.EncodeToString(out), records: string(recs), maps: kernelEntries(t, maps)}
	if c.marker != "" {
		text, err := os.ReadFile("/sys/kernel/tracing/trace")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// A line is "TASK-PID [CPU] FLAGS TIME: bpf_trace_printk: TEXT".
		var lines []string
		for l := range strings.Lines(string(text)) {
			if _, after, ok := strings.Cut(l, "bpf_trace_printk: "); ok && strings.Contains(after, c.marker) {
				lines = append(lines, after)
			}
		}
		res.trace = traceLines(strings.Join(lines, ""), c.marker)
	}
	return res
}

// kernelEntries lists the entries of the kernel maps after the ring
// buffer as the harness lists the runtime's (see canonMaps); a per-CPU
// value is CPU 0's, followed by another CPU's that is not zero.
func kernelEntries(t *testing.T, maps []*ebpf.Map) string {
	var out []byte
	for i, s := range kernelMapSpecs(8) {
		if i < mapArr {
			continue
		}
		out = fmt.Appendf(out, "%s:", s.Name)
		var k uint32
		var v uint64
		var vs []uint64
		it := maps[i].Iterate()
		perCPU := s.Type == runtime.PerCPUArray || s.Type == runtime.PerCPUHash || s.Type == runtime.LRUPerCPUHash
		for perCPU && it.Next(&k, &vs) || !perCPU && it.Next(&k, &v) {
			if perCPU {
				v = vs[0]
			}
			out = fmt.Appendf(out, " %x=%x", binary.LittleEndian.AppendUint32(nil, k), binary.LittleEndian.AppendUint64(nil, v))
			for cpu := 1; perCPU && cpu < len(vs); cpu++ {
				if vs[cpu] != 0 {
					out = fmt.Appendf(out, "+cpu%d:%x", cpu, vs[cpu])
				}
			}
		}
		if err := it.Err(); err != nil {
			t.Fatalf("map %s: %v", s.Name, err)
		}
		out = append(out, ';')
	}
	return canonMaps(string(out))
}

// canonMaps puts a listing of maps' entries, "name: key=value...;" for
// each map as the agreement harness writes them, in a form that compares:
// each map's entries sorted (a hash map's order is its own), the maps
// without entries left out.
func canonMaps(s string) string {
	var out []string
	for _, m := range strings.Split(s, ";") {
		name, list, _ := strings.Cut(m, ":")
		es := strings.Fields(strings.ReplaceAll(list, "<nil>", ""))
		if len(es) == 0 {
			continue
		}
		slices.Sort(es)
		out = append(out, name+": "+strings.Join(es, " "))
	}
	return strings.Join(out, "; ")
}

// roomyTraceBuffer makes the kernel's trace buffer as large as tracing
// makes it on first use (1408 KiB a CPU). On a machine just booted it holds
// 7 KiB a CPU until a tracer expands it, which bpf_trace_printk does not:
// a few lines that programs of tests running beside this one print
// overwrite a case's line before it is read.
func roomyTraceBuffer(t *testing.T) {
	const file, want = "/sys/kernel/tracing/buffer_size_kb", 1408
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		t.Fatalf("%s is empty", file)
	}
	kb, err := strconv.Atoi(fields[0])
	if err != nil || kb >= want {
		return
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(want)), 0); err != nil {
		t.Fatalf("growing the trace buffer from %d KiB: %v", kb, err)
	}
}

// traceLines keeps the lines of trace_printk text that hold marker.
func traceLines(text, marker string) string {
	var out []string
	for l := range strings.Lines(text) {
		if strings.Contains(l, marker) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return strings.Join(out, "\n")
}

// varied applies c.vary to a packet in hex.
func varied(c kcase, mem string, env runEnv) string {
	b, err := hex.DecodeString(mem)
	if c.vary == nil || err != nil {
		return mem
	}
	c.vary(b, env)
	return hex.EncodeToString(b)
}

func engineResult(c kcase, o aotOutcome, env runEnv) (kresult, string) {
	if strings.HasPrefix(o.Err, "load: ") {
		return kresult{refused: true, why: o.Err}, ""
	}
	res := kresult{r0: uint32(o.R0), mem: varied(c, o.Mem, env), records: o.Records, maps: canonMaps(o.Maps)}
	if c.marker != "" {
		text, _ := hex.DecodeString(o.Trace)
		res.trace = traceLines(string(text), c.marker)
	}
	return res, o.Err
}

// unhash replaces the hex digits of the first n bytes of a packet in hex
// (an snprintf output) by x, so hashed pointers compare by shape.
func unhash(mem string, n int) string {
	b, err := hex.DecodeString(mem)
	if err != nil {
		return mem
	}
	for i := range min(n, len(b)) {
		if c := b[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
			b[i] = 'x'
		}
	}
	return hex.EncodeToString(b)
}

// unhashText replaces the hex digits after marker in trace_printk text
// by x, as unhash does in a packet.
func unhashText(text, marker string) string {
	m, rest, _ := strings.Cut(text, marker)
	return m + marker + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'f' {
			return 'x'
		}
		return r
	}, rest)
}

// runInterp runs c in skelgen's interpreter with the maps of the "kernel"
// setup, as the agreement harness does.
func runInterp(t *testing.T, c kcase, insns []runtime.Instruction) (kresult, string) {
	t.Helper()
	var maps []runtime.Map
	for _, spec := range kernelMapSpecs(len(c.rodata)) {
		m, err := runtime.NewMap(spec)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, m)
	}
	if err := maps[mapRodata].Update(make([]byte, 4), c.rodata, 0); err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	p, err := runtime.Load(&runtime.ProgramSpec{Name: c.name, Instructions: insns, Maps: maps}, &runtime.Options{Budget: 1 << 20, Output: &trace})
	if err != nil {
		return kresult{refused: true, why: err.Error()}, ""
	}
	mem := bytes.Clone(c.mem)
	var r0 uint64
	env := runEnv{pid: os.Getpid()}
	cpuErr := testenv.OnCPU(0, func(tid int) {
		env.tid = tid
		env.clocks(0)
		r0, err = p.Run(mem)
		env.clocks(1)
	})
	if cpuErr != nil {
		t.Fatalf("%s: %v", c.name, cpuErr)
	}
	var recs []byte
	rb := maps[mapRB].(*runtime.RingBuffer)
	for rec, ok := rb.Read(); ok; rec, ok = rb.Read() {
		recs = fmt.Appendf(recs, "%d:%x ", len(rec), rec)
	}
	if c.vary != nil {
		c.vary(mem, env)
	}
	res := kresult{r0: uint32(r0), mem: hex.EncodeToString(mem), records: string(recs), maps: runtimeEntries(maps)}
	if c.marker != "" {
		res.trace = traceLines(trace.String(), c.marker)
	}
	if err != nil {
		return res, err.Error()
	}
	return res, ""
}

// runtimeEntries lists the entries of the maps after the ring buffer, as
// kernelEntries does.
func runtimeEntries(maps []runtime.Map) string {
	var out []byte
	for _, mp := range maps[mapArr:] {
		out = fmt.Appendf(out, "%s:", mp.Spec().Name)
		var key []byte
		next := make([]byte, mp.Spec().KeySize)
		for n := 0; n <= int(mp.Spec().MaxEntries) && mp.NextKey(key, next) == nil; n++ {
			key = append(key[:0], next...)
			v, _ := mp.Lookup(key)
			out = fmt.Appendf(out, " %x=%x", key, v)
		}
		out = append(out, ';')
	}
	return canonMaps(string(out))
}

// TestHelpersKernelDifferential runs programs calling the built-in
// helpers (ring buffer, snprintf, strncmp, map lookup, update and delete,
// trace_printk, the clocks, get_prandom_u32, get_smp_processor_id and
// get_current_pid_tgid) in the kernel (XDP, BPF_PROG_TEST_RUN, on CPU 0)
// and in skelgen's interpreter and compares what each did: refused at
// load or not, r0, the packet the program wrote its results to, the ring
// buffer records a reader gets, the maps' entries (CPU 0's values of a
// per-CPU map) and the trace_printk text. The translations
// of a sample of the programs (all of them when SKELGEN_LONG=1: building
// them takes minutes) must do what the kernel did too.
func TestHelpersKernelDifferential(t *testing.T) {
	testenv.Kernel(t)
	testenv.Tracefs(t)
	roomyTraceBuffer(t)
	var cases []kcase
	cases = append(cases, ringbufCases()...)
	cases = append(cases, snprintfCases()...)
	cases = append(cases, strncmpCases()...)
	cases = append(cases, updateCases()...)
	cases = append(cases, mapCases()...)
	cases = append(cases, printkCases()...)
	cases = append(cases, varyingCases()...)
	kinds := map[string]int{}
	want := map[string]kresult{}
	var acases []aotCase
	var differ int
	compare := func(c kcase, engine string, got kresult, runErr string) {
		w := want[c.name]
		if c.hashed && c.marker != "" {
			w.trace, got.trace = unhashText(w.trace, c.marker), unhashText(got.trace, c.marker)
		} else if c.hashed {
			w.mem, got.mem = unhash(w.mem, 100), unhash(got.mem, 100)
		}
		if runErr != "" || !got.same(w) {
			differ++
			t.Errorf("%s:\nkernel: %v\n%s: %v %s", c.name, w, engine, got, runErr)
		}
	}
	for _, c := range cases {
		if _, dup := want[c.name]; dup {
			t.Fatalf("two cases named %s", c.name)
		}
		kinds[strings.SplitN(c.name, "/", 2)[0]]++
		var raw bytes.Buffer
		if err := c.body.Marshal(&raw, binary.LittleEndian); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		insns, err := runtime.DecodeInstructions(raw.Bytes(), binary.LittleEndian)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want[c.name] = runKernel(t, c)
		got, runErr := runInterp(t, c, insns)
		compare(c, "interpreter", got, runErr)
		acases = append(acases, aotCase{Name: c.name, Insns: insns, Mem: c.mem, Setup: "kernel", Data: c.rodata, Budget: 1 << 20})
	}
	sample := testenv.Sample(acases, 120)
	// The translations run in the harness's process, on threads the
	// test does not know, between these clock readings.
	var env runEnv
	env.clocks(0)
	res := runAgreement(t, sample, false)
	env.clocks(1)
	byName := map[string]kcase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	for i, l := range res.Lines {
		c := byName[sample[i].Name]
		// A varying case's runs differ by nature: each is compared with
		// the kernel's once its varying words are checked.
		if d := l.disagreement(false); d != "" && c.vary == nil {
			t.Errorf("%s: engines disagree: %s", c.name, d)
		}
		got, runErr := engineResult(c, l.AOT, env)
		compare(c, "translation", got, runErr)
	}
	t.Logf("%d programs run in the kernel and the interpreter (%v), %d of them translated too (built in %v); %d runs differ from the kernel's",
		len(cases), kinds, len(sample), res.BuildTime.Round(time.Second), differ)
}

// ---- ring buffer

// rbOp is one ring buffer call: o output(size, flags), r reserve(size,
// flags) into a slot (r7, r8 or r9), s submit(slot, flags), d
// discard(slot, flags). Output and reserve write their result (r0, or
// whether the record is not NULL) to the packet's u64 k (k the op's
// index); a reserved record up to 32 KiB gets byte k+1 at its first and
// last place.
type rbOp struct {
	kind  byte
	slot  int
	size  int
	flags uint64
}

// rbData is the packet offset of output's data, which the program copies
// to the stack (output may not read the packet).
const rbData = 128

func ringbufProgram(ops []rbOp) ebpfasm.Instructions {
	r0, r1, r2, r3, r4, r6, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R4, ebpfasm.R6, ebpfasm.R10
	slot := func(s int) ebpfasm.Register { return ebpfasm.R7 + ebpfasm.Register(s) }
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1)}
	p = append(p, copyWords(r10, -512, r6, rbData, 512)...)
	for k, op := range ops {
		switch op.kind {
		case 'o':
			p = append(p, mapPtr(r1, mapRB), ebpfasm.Mov.Reg(r2, r10), ebpfasm.Add.Imm(r2, -512),
				ebpfasm.Mov.Imm(r3, int32(op.size)), ebpfasm.LoadImm(r4, int64(op.flags), ebpfasm.DWord),
				ebpfasm.FnRingbufOutput.Call(), ebpfasm.StoreMem(r6, int16(8*k), r0, ebpfasm.DWord))
		case 'r':
			s := slot(op.slot)
			p = append(p, mapPtr(r1, mapRB), ebpfasm.Mov.Imm(r2, int32(op.size)), ebpfasm.LoadImm(r3, int64(op.flags), ebpfasm.DWord),
				ebpfasm.FnRingbufReserve.Call(), ebpfasm.Mov.Reg(s, r0))
			var fill ebpfasm.Instructions
			if op.size > 0 && op.size <= 1<<15 {
				fill = ebpfasm.Instructions{ebpfasm.StoreImm(s, 0, int64(k+1), ebpfasm.Byte), ebpfasm.StoreImm(s, int16(op.size-1), int64(k+1), ebpfasm.Byte)}
			}
			p = append(p, ebpfasm.Mov.Imm(r1, 0),
				ebpfasm.Instruction{OpCode: ebpfasm.JEq.Op(ebpfasm.ImmSource), Dst: s, Offset: int16(1 + len(fill))},
				ebpfasm.Mov.Imm(r1, 1))
			p = append(p, fill...)
			p = append(p, ebpfasm.StoreMem(r6, int16(8*k), r1, ebpfasm.DWord))
		case 's', 'd':
			fn := ebpfasm.FnRingbufSubmit
			if op.kind == 'd' {
				fn = ebpfasm.FnRingbufDiscard
			}
			s := slot(op.slot)
			p = append(p, ebpfasm.Instruction{OpCode: ebpfasm.JEq.Op(ebpfasm.ImmSource), Dst: s, Offset: 3},
				ebpfasm.Mov.Reg(r1, s), ebpfasm.Mov.Imm(r2, int32(op.flags)), fn.Call())
		}
	}
	return append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
}

func ringbufMem() []byte {
	mem := make([]byte, 1024)
	for i := range mem {
		mem[i] = byte(i*7 + 1)
	}
	return mem
}

func ringbufCases() []kcase {
	type seq struct {
		name string
		ops  []rbOp
	}
	o := func(size int, flags uint64) rbOp { return rbOp{kind: 'o', size: size, flags: flags} }
	r := func(s, size int, flags uint64) rbOp { return rbOp{kind: 'r', slot: s, size: size, flags: flags} }
	sub := func(s int) rbOp { return rbOp{kind: 's', slot: s} }
	dis := func(s int) rbOp { return rbOp{kind: 'd', slot: s} }
	seqs := []seq{
		{"output", []rbOp{o(8, 0), o(1, 0), o(13, 0)}},
		{"output0", []rbOp{o(0, 0), o(4, 0), o(0, 0)}},
		{"reserve0", []rbOp{r(0, 0, 0), sub(0), r(0, 0, 0), dis(0), o(3, 0)}},
		{"order/submit_reversed", []rbOp{r(0, 8, 0), r(1, 16, 0), sub(1), sub(0)}},
		{"order/three", []rbOp{r(0, 8, 0), r(1, 5, 0), r(2, 3, 0), sub(2), sub(0), sub(1)}},
		{"order/discard_first", []rbOp{r(0, 8, 0), r(1, 8, 0), dis(0), sub(1)}},
		{"order/output_behind_reserved", []rbOp{r(0, 8, 0), o(4, 0), sub(0)}},
		{"order/discard_between", []rbOp{r(0, 8, 0), r(1, 8, 0), r(2, 8, 0), dis(1), sub(2), sub(0)}},
		{"full/ring_size", []rbOp{r(0, 1<<14-8, 0), sub(0)}},
		{"full/ring_size_less_8", []rbOp{r(0, 1<<14-16, 0), sub(0)}},
		{"full/ring_size_less_9", []rbOp{r(0, 1<<14-17, 0), sub(0)}},
		{"full/over", []rbOp{r(0, 1<<14, 0), sub(0)}},
		{"full/huge", []rbOp{r(0, 1<<30, 0), sub(0)}},
		{"full/discarded_space", []rbOp{r(0, 6000, 0), dis(0), r(0, 6000, 0), dis(0), r(0, 6000, 0), sub(0), o(8, 0)}},
		{"full/two_halves", []rbOp{r(0, 8184, 0), r(1, 8184, 0), sub(0), sub(1), o(0, 0)}},
		{"full/near", []rbOp{r(0, 8000, 0), r(1, 8000, 0), sub(1), sub(0), o(352, 0), o(344, 0), o(0, 0)}},
	}
	for _, f := range []uint64{0, 1, 2, 3, 4, 8, 1 << 32, 1 << 63} {
		seqs = append(seqs,
			seq{fmt.Sprintf("flags/output=%#x", f), []rbOp{o(8, f), o(8, 0)}},
			seq{fmt.Sprintf("flags/reserve=%#x", f), []rbOp{r(0, 8, f), sub(0), o(8, 0)}},
			seq{fmt.Sprintf("flags/submit=%#x", f), []rbOp{r(0, 8, 0), {kind: 's', slot: 0, flags: f}, r(0, 8, 0), {kind: 'd', slot: 0, flags: f}}},
		)
	}
	var cases []kcase
	for _, s := range seqs {
		cases = append(cases, kcase{name: "ringbuf/" + s.name, body: ringbufProgram(s.ops), rodata: make([]byte, 8), mem: ringbufMem()})
	}
	// n outputs of 8 bytes in a loop (r8 counts down): count the ones
	// that succeed (r9).
	for _, n := range []int{1022, 1023, 1024, 1100} {
		r0, r1, r2, r3, r4, r6, r8, r9, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R4, ebpfasm.R6, ebpfasm.R8, ebpfasm.R9, ebpfasm.R10
		p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1), ebpfasm.Mov.Imm(r9, 0), ebpfasm.Mov.Imm(r8, int32(n))}
		p = append(p, copyWords(r10, -8, r6, 8, 8)...)
		loop := ebpfasm.Instructions{mapPtr(r1, mapRB), ebpfasm.Mov.Reg(r2, r10), ebpfasm.Add.Imm(r2, -8), ebpfasm.Mov.Imm(r3, 8), ebpfasm.Mov.Imm(r4, 0),
			ebpfasm.FnRingbufOutput.Call(),
			ebpfasm.Instruction{OpCode: ebpfasm.JNE.Op(ebpfasm.ImmSource), Dst: r0, Offset: 1},
			ebpfasm.Add.Imm(r9, 1),
			ebpfasm.Sub.Imm(r8, 1)}
		slots := 1 // the jne back
		for _, in := range loop {
			slots += int(in.Size() / 8)
		}
		p = append(p, loop...)
		p = append(p, ebpfasm.Instruction{OpCode: ebpfasm.JNE.Op(ebpfasm.ImmSource), Dst: r8, Offset: int16(-slots)},
			ebpfasm.StoreMem(r6, 0, r9, ebpfasm.DWord), ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
		cases = append(cases, kcase{name: fmt.Sprintf("ringbuf/count/%d", n), body: p, rodata: make([]byte, 8), mem: make([]byte, 64)})
	}
	return cases
}

// ---- snprintf

// Packet layout of the snprintf cases.
const (
	snOut    = 0   // the output, 100 bytes (and 4 more, unwritten)
	snRet    = 120 // snprintf's r0
	snHello  = 128 // "hello world"
	snIPv4   = 160
	snIPv6   = 176
	snEmpty  = 192 // ""
	snMemLen = 256
)

// snArg is an snprintf argument: a constant, or (ptr >= 0) the address of
// the packet's byte ptr.
type snArg struct {
	val uint64
	ptr int
}

func v(x uint64) snArg { return snArg{val: x, ptr: -1} }
func pk(off int) snArg { return snArg{ptr: off} }

type snCase struct {
	format  string
	args    []snArg
	size    int // str_size; 100 when 0
	dataLen int // data_len; 8*len(args) when 0
	hashed  bool
}

func snprintfProgram(c snCase) ebpfasm.Instructions {
	r0, r1, r2, r3, r4, r5, r6, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R4, ebpfasm.R5, ebpfasm.R6, ebpfasm.R10
	const argBase = -8 * 16
	const out = -256 // 104 bytes of stack that stand for the packet's output bytes
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1)}
	p = append(p, copyWords(r10, out, r6, snOut, 104)...)
	for k, a := range c.args {
		if a.ptr >= 0 {
			p = append(p, ebpfasm.Mov.Reg(r1, r6), ebpfasm.Add.Imm(r1, int32(a.ptr)))
		} else {
			p = append(p, ebpfasm.LoadImm(r1, int64(a.val), ebpfasm.DWord))
		}
		p = append(p, ebpfasm.StoreMem(r10, int16(argBase+8*k), r1, ebpfasm.DWord))
	}
	size, dataLen := c.size, c.dataLen
	if size == 0 {
		size = 100
	}
	if dataLen == 0 {
		dataLen = 8 * len(c.args)
	}
	p = append(p, ebpfasm.Mov.Reg(r1, r10), ebpfasm.Add.Imm(r1, out), ebpfasm.Mov.Imm(r2, int32(size)), mapValue(r3, mapRodata, 0))
	if dataLen > 0 {
		p = append(p, ebpfasm.Mov.Reg(r4, r10), ebpfasm.Add.Imm(r4, argBase))
	} else {
		p = append(p, ebpfasm.Mov.Imm(r4, 0))
	}
	p = append(p, ebpfasm.Mov.Imm(r5, int32(dataLen)), ebpfasm.FnSnprintf.Call(), ebpfasm.StoreMem(r6, snRet, r0, ebpfasm.DWord))
	p = append(p, copyWords(r6, snOut, r10, out, 104)...)
	return append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
}

func snprintfMem() []byte {
	mem := bytes.Repeat([]byte{0xaa}, snMemLen)
	copy(mem[snHello:], "hello world\x00")
	copy(mem[snIPv4:], []byte{192, 168, 1, 10})
	copy(mem[snIPv6:], []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xfe, 0x80, 0, 0x12, 0, 1})
	mem[snEmpty] = 0
	return mem
}

func snprintfCases() []kcase {
	var cs []snCase
	ints := []snArg{v(0), v(42), v(^uint64(41)), v(0x80000000), v(0xffffffff), v(0x123456789abcdef0)}
	// Every integer conversion with every modifier and flags and width.
	var specs []string
	for _, conv := range []string{"d", "i", "u", "x", "X"} {
		for _, mod := range []string{"", "l", "ll"} {
			for _, fw := range []string{"", "1", "5", "12", "-5", "05", "+", " ", "+8", "-08", "020", " 6", "+-6", "0-7", "00+3"} {
				specs = append(specs, "%"+fw+mod+conv)
			}
		}
	}
	for _, spec := range specs {
		cs = append(cs, snCase{format: strings.Repeat("["+spec+"]", len(ints)), args: ints})
	}
	chars := []snArg{v('A'), v(0x141), v('z'), v(0)}
	for _, fw := range []string{"", "1", "4", "-4", "04", "+3"} {
		spec := "%" + fw + "c"
		cs = append(cs, snCase{format: "<" + strings.Repeat(spec, len(chars)) + ">", args: chars})
	}
	strs := []snArg{pk(snHello), pk(snEmpty), v(0), v(0xdead), pk(snHello + 6)}
	for _, fw := range []string{"", "3", "14", "-14", "014", "+5"} {
		spec := "%" + fw + "s"
		cs = append(cs, snCase{format: strings.Repeat("["+spec+"]", len(strs)), args: strs})
	}
	for _, a := range strs {
		cs = append(cs,
			snCase{format: "s=%s.", args: []snArg{a}},
			snCase{format: "a=%d s=%s x=%x", args: []snArg{v(7), a, v(255)}},
			snCase{format: "%pks|", args: []snArg{a}},
			snCase{format: "%20pks|%-20pks|%020pks", args: []snArg{a, a, a}},
		)
		// %pus reads user memory, which a packet is not; the runtime
		// reads its memory as %s does (it has one address space), so
		// only strings neither can read are compared.
		if a.ptr < 0 {
			cs = append(cs, snCase{format: "%pus|", args: []snArg{a}})
		}
	}
	for _, spec := range []string{"%pI4", "%pi4", "%pI6", "%pi6", "%20pI4", "%-20pI4", "%pI6c", "%pI4x", "%pI4 x", "%pI4-"} {
		for _, a := range []snArg{pk(snIPv4), pk(snIPv6), v(0)} {
			cs = append(cs, snCase{format: "<" + spec + ">", args: []snArg{a}})
		}
	}
	for _, spec := range []string{"%px", "%20px", "%-20px", "%020px", "%5px", "%pS", "%ps", "%pB", "%20ps", "%-20pS", "%020ps", "%20pB", "%-20pB",
		"%pK", "%20pK", "%p", "%20p", "%px1", "%p-"} {
		for _, x := range []uint64{0, 0x1234, ^uint64(0), ^uint64(4094), ^uint64(4095)} {
			// The kernel hashes %p and %pK (kptr_restrict 0) but for NULL
			// and error pointers: compare the hash's shape, 16 digits, or
			// nothing when a width pads it (it has up to 8 digits).
			hashed := (spec == "%pK" || spec == "%20pK" || spec == "%p" || spec == "%20p" || spec == "%p-") && x != 0 && x < ^uint64(4094)
			if hashed && strings.HasPrefix(spec, "%20") {
				continue
			}
			cs = append(cs, snCase{format: "<" + spec + ">", args: []snArg{v(x)}, hashed: hashed})
		}
	}
	for _, f := range []string{"", "plain text", "100%%", "%%d", "%%%d", "%d%%", "tab\there\nnewline", "%d%d%d%d%d%d%d%d%d%d%d%d",
		"%-+d|%+-d|% -d", "%+ d|% +d"} {
		cs = append(cs, snCase{format: f, args: []snArg{v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12)}})
	}
	// What the kernel refuses at load: conversions, modifiers and flags
	// it does not know, too few arguments, bytes it does not print.
	for _, f := range []string{"%hd", "%hhd", "%hu", "%zu", "%zd", "%jd", "%td", "%Ld", "%qd", "%o", "%lo", "%lc", "%ls", "%lp", "%lls",
		"%.2d", "%5.2d", "%.3s", "%*d", "%#x", "%#o", "%f", "%e", "%g", "%a", "%n", "%y", "%", "abc%", "%5%", "%-%",
		"%pa", "%pi5", "%pI", "%pI5", "%pM", "%pE", "%sx", "%s5", "%pksx", "%l", "%ll", "%lld%", "%lllx", "%0", "%-",
		"\x01", "caf\xc3\xa9", "\x7f", "\x80%d\xff", "%d %d"} {
		cs = append(cs, snCase{format: f, args: []snArg{v(1)}})
	}
	cs = append(cs,
		snCase{format: "%d", args: nil},
		snCase{format: "%d", args: []snArg{v(5), v(6)}, dataLen: 12},
		snCase{format: "%d", args: []snArg{v(5), v(6)}, dataLen: 13 * 8},
		snCase{format: "x", args: []snArg{v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12), v(13)}},
		snCase{format: "hello world", size: 5},
		snCase{format: "%s", args: []snArg{pk(snHello)}, size: 1},
		snCase{format: "%d", args: []snArg{v(123456)}, size: 3},
		snCase{format: "%100d", args: []snArg{v(1)}},
		snCase{format: "%1000d", args: []snArg{v(1)}},
	)
	var cases []kcase
	for _, c := range cs {
		rodata := append([]byte(c.format), 0)
		rodata = append(rodata, make([]byte, 8-len(rodata)%8)...)
		name := fmt.Sprintf("snprintf/%q/", c.format)
		for _, a := range c.args {
			if a.ptr >= 0 {
				name += fmt.Sprintf("&%d,", a.ptr)
			} else {
				name += fmt.Sprintf("%#x,", a.val)
			}
		}
		if c.size != 0 || c.dataLen != 0 {
			name += fmt.Sprintf("/size=%d/data_len=%d", c.size, c.dataLen)
		}
		cases = append(cases, kcase{name: name, body: snprintfProgram(c), rodata: rodata, mem: snprintfMem(), hashed: c.hashed})
	}
	return cases
}

// ---- strncmp

func strncmpCases() []kcase {
	strs := []string{"", "a", "b", "ab", "abc", "abd", "abcd", "A", "\x80", "\xff", "\x01", "zzz", "hello", "hellp", "hello world!"}
	type pair struct {
		s1, s2 string
		n      int
	}
	var pairs []pair
	for _, s1 := range strs {
		for _, s2 := range strs {
			for _, n := range []int{1, 3, 13} {
				pairs = append(pairs, pair{s1, s2, n})
			}
		}
	}
	// s1 with bytes after its NUL, which strncmp does not reach.
	pairs = append(pairs, pair{"ab\x00x", "ab", 4}, pair{"ab\x00x", "ab\x00y", 4}, pair{"abc", "abc", 16})
	const per = 32 // pairs per program: s1 in 16-byte slots, copied to the stack, results after them
	var cases []kcase
	for start := 0; start < len(pairs); start += per {
		ps := pairs[start:min(start+per, len(pairs))]
		r0, r1, r2, r3, r6, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R6, ebpfasm.R10
		mem := make([]byte, 16*per+8*per)
		var rodata []byte
		p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1)}
		p = append(p, copyWords(r10, -16*per, r6, 0, 16*per)...)
		for k, pr := range ps {
			copy(mem[16*k:16*k+16], pr.s1)
			off := len(rodata)
			rodata = append(append(rodata, pr.s2...), 0)
			p = append(p, ebpfasm.Mov.Reg(r1, r10), ebpfasm.Add.Imm(r1, int32(16*k-16*per)), ebpfasm.Mov.Imm(r2, int32(pr.n)),
				mapValue(r3, mapRodata, off), ebpfasm.FnStrncmp.Call(),
				ebpfasm.StoreMem(r6, int16(16*per+8*k), r0, ebpfasm.DWord))
		}
		p = append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
		rodata = append(rodata, make([]byte, 8-len(rodata)%8)...)
		cases = append(cases, kcase{name: fmt.Sprintf("strncmp/%d-%d", start, start+len(ps)-1), body: p, rodata: rodata, mem: mem})
	}
	return cases
}

// ---- map updates

type mapUpdate struct {
	m     int
	key   uint32
	flags uint64
}

// updateProgram runs the updates (value: the update's index + 1), writing
// each r0 to the packet's u64 at 8*j, then looks up keys 0..5 of map m,
// writing each value (or -1) after them.
func updateProgram(m int, ups []mapUpdate) ebpfasm.Instructions {
	r0, r1, r2, r3, r4, r6, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R4, ebpfasm.R6, ebpfasm.R10
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1)}
	for j, u := range ups {
		p = append(p, ebpfasm.StoreImm(r10, -4, int64(u.key), ebpfasm.Word),
			ebpfasm.Instruction{OpCode: ebpfasm.StoreImmOp(ebpfasm.DWord), Dst: r10, Offset: -16, Constant: int64(j + 1)},
			mapPtr(r1, u.m), ebpfasm.Mov.Reg(r2, r10), ebpfasm.Add.Imm(r2, -4),
			ebpfasm.Mov.Reg(r3, r10), ebpfasm.Add.Imm(r3, -16), ebpfasm.LoadImm(r4, int64(u.flags), ebpfasm.DWord),
			ebpfasm.FnMapUpdateElem.Call(), ebpfasm.StoreMem(r6, int16(8*j), r0, ebpfasm.DWord))
	}
	for k := range 6 {
		p = append(p, ebpfasm.StoreImm(r10, -4, int64(k), ebpfasm.Word),
			mapPtr(r1, m), ebpfasm.Mov.Reg(r2, r10), ebpfasm.Add.Imm(r2, -4), ebpfasm.FnMapLookupElem.Call(),
			ebpfasm.Mov.Imm(r1, -1),
			ebpfasm.Instruction{OpCode: ebpfasm.JEq.Op(ebpfasm.ImmSource), Dst: r0, Offset: 1},
			ebpfasm.LoadMem(r1, r0, 0, ebpfasm.DWord),
			ebpfasm.StoreMem(r6, int16(8*(16+k)), r1, ebpfasm.DWord))
	}
	return append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
}

func updateCases() []kcase {
	flags := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 1 << 32, 1 << 63}
	type scenario struct {
		name  string
		m     int
		setup []mapUpdate
		key   uint32
	}
	scs := []scenario{
		{"array/first", mapArr, nil, 0},
		{"array/last", mapArr, nil, 3},
		{"array/past_end", mapArr, nil, 4},
		{"array/max_key", mapArr, nil, 0xffffffff},
		{"hash/new", mapHash, nil, 1},
		{"hash/existing", mapHash, []mapUpdate{{mapHash, 1, 0}}, 1},
		{"hash/new_full", mapHash, []mapUpdate{{mapHash, 0, 0}, {mapHash, 1, 0}, {mapHash, 2, 0}, {mapHash, 3, 0}}, 4},
		{"hash/existing_full", mapHash, []mapUpdate{{mapHash, 0, 0}, {mapHash, 1, 0}, {mapHash, 2, 0}, {mapHash, 3, 0}}, 2},
	}
	var cases []kcase
	for _, sc := range scs {
		for _, f := range flags {
			ups := append(append([]mapUpdate(nil), sc.setup...), mapUpdate{sc.m, sc.key, f})
			cases = append(cases, kcase{name: fmt.Sprintf("update/%s/flags=%#x", sc.name, f), body: updateProgram(sc.m, ups), rodata: make([]byte, 8), mem: make([]byte, 256)})
		}
	}
	return cases
}

// ---- map lookups, updates and deletes

// mapOp is one step of a map program, writing a u64 to the packet at 8*k
// (k the step's index): l looks key up, keeping the pointer in r7, and
// writes the value or -1 (NULL); p looks up as l does but keeps r7; w
// writes val through r7 and writes whether it could (r7 not NULL); r
// reads through r7 (-1: NULL); u updates key to val with flags and d
// deletes key, writing r0.
type mapOp struct {
	op    byte
	key   uint32
	val   int32
	flags uint64
}

func mapProgram(m int, ops []mapOp) ebpfasm.Instructions {
	r0, r1, r2, r3, r4, r6, r7, r10 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R3, ebpfasm.R4, ebpfasm.R6, ebpfasm.R7, ebpfasm.R10
	jeq0 := func(r ebpfasm.Register, skip int16) ebpfasm.Instruction {
		return ebpfasm.Instruction{OpCode: ebpfasm.JEq.Op(ebpfasm.ImmSource), Dst: r, Offset: skip}
	}
	key := func(k uint32) ebpfasm.Instructions {
		return ebpfasm.Instructions{ebpfasm.StoreImm(r10, -4, int64(int32(k)), ebpfasm.Word), mapPtr(r1, m), ebpfasm.Mov.Reg(r2, r10), ebpfasm.Add.Imm(r2, -4)}
	}
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1), ebpfasm.Mov.Imm(r7, 0)}
	for k, o := range ops {
		out := int16(8 * k)
		switch o.op {
		case 'l', 'p':
			p = append(p, key(o.key)...)
			p = append(p, ebpfasm.FnMapLookupElem.Call())
			if o.op == 'l' {
				p = append(p, ebpfasm.Mov.Reg(r7, r0))
			}
			p = append(p, ebpfasm.Mov.Imm(r1, -1), jeq0(r0, 1), ebpfasm.LoadMem(r1, r0, 0, ebpfasm.DWord), ebpfasm.StoreMem(r6, out, r1, ebpfasm.DWord))
		case 'r':
			p = append(p, ebpfasm.Mov.Imm(r1, -1), jeq0(r7, 1), ebpfasm.LoadMem(r1, r7, 0, ebpfasm.DWord), ebpfasm.StoreMem(r6, out, r1, ebpfasm.DWord))
		case 'w':
			p = append(p, ebpfasm.Mov.Imm(r1, 0), jeq0(r7, 3), ebpfasm.Mov.Imm(r1, o.val),
				ebpfasm.StoreMem(r7, 0, r1, ebpfasm.DWord), ebpfasm.Mov.Imm(r1, 1), ebpfasm.StoreMem(r6, out, r1, ebpfasm.DWord))
		case 'u':
			p = append(p, ebpfasm.Instruction{OpCode: ebpfasm.StoreImmOp(ebpfasm.DWord), Dst: r10, Offset: -16, Constant: int64(o.val)})
			p = append(p, key(o.key)...)
			p = append(p, ebpfasm.Mov.Reg(r3, r10), ebpfasm.Add.Imm(r3, -16), ebpfasm.LoadImm(r4, int64(o.flags), ebpfasm.DWord),
				ebpfasm.FnMapUpdateElem.Call(), ebpfasm.StoreMem(r6, out, r0, ebpfasm.DWord))
		case 'd':
			p = append(p, key(o.key)...)
			p = append(p, ebpfasm.FnMapDeleteElem.Call(), ebpfasm.StoreMem(r6, out, r0, ebpfasm.DWord))
		}
	}
	return append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
}

func mapCases() []kcase {
	l := func(k uint32) mapOp { return mapOp{op: 'l', key: k} }
	pk := func(k uint32) mapOp { return mapOp{op: 'p', key: k} }
	w := func(v int32) mapOp { return mapOp{op: 'w', val: v} }
	rd := mapOp{op: 'r'}
	u := func(k uint32, v int32, f uint64) mapOp { return mapOp{op: 'u', key: k, val: v, flags: f} }
	d := func(k uint32) mapOp { return mapOp{op: 'd', key: k} }
	seqs := []struct {
		name string
		ops  []mapOp
	}{
		{"lookup_empty", []mapOp{pk(0), pk(3), pk(4), pk(5), pk(0x80000000), pk(0xffffffff)}},
		{"delete_empty", []mapOp{d(0), d(3), d(4), d(0xffffffff), pk(0)}},
		{"update_lookup_delete", []mapOp{u(1, 11, 0), pk(1), d(1), pk(1), d(1), u(1, 12, 0), pk(1), pk(2), d(4), u(4, 13, 0), pk(4)}},
		{"write_through", []mapOp{u(2, 5, 0), l(2), w(77), pk(2), rd, l(3), w(-1), pk(3), rd, l(9), w(8), rd}},
		{"stale_after_delete", []mapOp{u(1, 5, 0), l(1), d(1), rd, pk(1), u(1, 6, 0), rd, pk(1), w(9), pk(1)}},
		{"stale_after_delete_other", []mapOp{u(1, 5, 0), u(2, 7, 0), l(1), d(1), rd, u(3, 8, 0), rd, pk(3), w(9), pk(3), pk(2)}},
		{"fill", []mapOp{u(0, 10, 0), u(1, 11, 0), u(2, 12, 0), u(3, 13, 0), u(4, 14, 0), d(2), u(4, 15, 0), u(2, 16, 2), u(5, 17, 1),
			pk(0), pk(1), pk(2), pk(3), pk(4), pk(5)}},
		{"flags", []mapOp{u(1, 1, 1), u(1, 2, 1), u(1, 3, 2), u(3, 4, 2), u(2, 5, 4), u(2, 6, 8), pk(1), pk(2), pk(3)}},
		{"readd", []mapOp{u(0, 1, 0), u(1, 2, 0), u(2, 3, 0), u(3, 4, 0), d(0), d(1), d(2), d(3), u(7, 5, 0), u(6, 6, 0), u(5, 7, 0), u(4, 8, 0),
			pk(0), pk(4), pk(7)}},
		{"lookup_then_insert", []mapOp{u(0, 1, 0), u(1, 2, 0), u(2, 3, 0), pk(0), pk(1), u(3, 4, 0), pk(0), pk(1), pk(2), pk(3)}},
	}
	// Updates of a key the map holds, a pointer to its value looked up
	// before: the kernel updates arrays' and per-CPU hash maps' values in
	// place, and puts a new element in the old one's place in the other
	// hash maps, so the pointer still reaches the old value until the old
	// element is reused (see the runtime's package documentation). The
	// LRU maps take an element for an update before they look its key up
	// (the per-CPU one unless BPF_EXIST), evicting one when none is free.
	seqs = append(seqs, []struct {
		name string
		ops  []mapOp
	}{
		{"stale_after_update", []mapOp{u(1, 5, 0), l(1), u(1, 6, 0), rd, pk(1), w(9), pk(1), rd}},
		{"stale_after_updates", []mapOp{u(1, 5, 0), l(1), u(1, 6, 0), u(1, 7, 0), rd, pk(1), u(1, 8, 0), rd, pk(1)}},
		{"stale_after_update_insert", []mapOp{u(1, 5, 0), l(1), u(1, 6, 0), u(2, 7, 0), rd, pk(1), pk(2), u(1, 8, 0), rd}},
		{"stale_after_update_delete", []mapOp{u(1, 5, 0), u(2, 6, 0), l(1), u(1, 7, 0), d(2), u(3, 8, 0), rd, u(1, 9, 0), rd, pk(1), pk(3)}},
		{"stale_after_update_flags", []mapOp{u(1, 5, 0), l(1), u(1, 6, 1), rd, u(1, 7, 2), rd, pk(1)}},
		{"stale_after_update_full", []mapOp{u(0, 10, 0), u(1, 11, 0), u(2, 12, 0), u(3, 13, 0), l(2), u(2, 20, 0), rd,
			pk(0), pk(1), pk(2), pk(3), u(2, 21, 0), rd, u(4, 14, 0), rd, pk(4)}},
		{"update_full_flags", []mapOp{u(0, 10, 0), u(1, 11, 0), u(2, 12, 0), u(3, 13, 0), u(2, 20, 1),
			pk(0), pk(1), pk(2), pk(3), u(9, 21, 2), pk(1), pk(2), pk(3), pk(9)}},
		{"update_full_exist", []mapOp{u(0, 10, 0), u(1, 11, 0), u(2, 12, 0), u(3, 13, 0), l(2), u(9, 21, 2), rd,
			pk(0), pk(1), pk(2), pk(3), u(2, 22, 2), rd, pk(0), pk(1), pk(2), pk(3)}},
	}...)
	var cases []kcase
	for _, m := range []int{mapArr, mapHash, mapPCArr, mapPCHash, mapLRU, mapNPHash, mapLRUPC} {
		for _, s := range seqs {
			cases = append(cases, kcase{name: fmt.Sprintf("map/%s/%s", kernelMapSpecs(8)[m].Name, s.name), body: mapProgram(m, s.ops),
				rodata: make([]byte, 8), mem: make([]byte, 8*len(s.ops))})
		}
	}
	return cases
}

// ---- trace_printk

// printkCase is a trace_printk call: the format (after the case's
// marker), its fmt_size (the format's length and NUL when 0, or that plus
// size when negative) and three arguments.
type printkCase struct {
	format string
	size   int
	args   [3]snArg
	hashed bool
}

// printkProgram calls trace_printk with the format in .rodata, writing r0
// to the packet's first u64.
func printkProgram(size int, args [3]snArg) ebpfasm.Instructions {
	r0, r1, r2, r6 := ebpfasm.R0, ebpfasm.R1, ebpfasm.R2, ebpfasm.R6
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, r1)}
	for i, a := range args {
		r := ebpfasm.R3 + ebpfasm.Register(i)
		if a.ptr >= 0 {
			p = append(p, ebpfasm.Mov.Reg(r, r6), ebpfasm.Add.Imm(r, int32(a.ptr)))
		} else {
			p = append(p, ebpfasm.LoadImm(r, int64(a.val), ebpfasm.DWord))
		}
	}
	p = append(p, mapValue(r1, mapRodata, 0), ebpfasm.Mov.Imm(r2, int32(size)), ebpfasm.FnTracePrintk.Call(),
		ebpfasm.StoreMem(r6, 0, r0, ebpfasm.DWord))
	return append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
}

func printkCases() []kcase {
	a3 := func(a, b, c snArg) [3]snArg { return [3]snArg{a, b, c} }
	ints := a3(v(42), v(^uint64(6)), v(0x123456789abcdef0))
	var cs []printkCase
	for _, f := range []string{"", "plain", "plain\n", "two\nlines", "%d", "%d %d %d", "%d\n", "%u %x %X", "%ld %lu %lx", "%lld %llu %llx",
		"%5d|%-5d|%05d", "%+d % d", "%i %li %lli", "100%%", "%%d", "%c%c%c", "%d %d %d %d", "%d%d%d%d", "\t tab",
		"%", "%hd", "%5%", "%.2d", "%*d", "%f", "%n", "%o", "%z", "%pa", "%pM", "%ls", "\x01", "caf\xc3\xa9", "\x7f",
		"%px", "%pS", "%pB", "%p", "%pK", "%1000d", "%2000d"} {
		// The kernel hashes %p and %pK: compare the hash's shape.
		cs = append(cs, printkCase{format: f, args: ints, hashed: f == "%p" || f == "%pK"})
	}
	strs := a3(pk(snHello), pk(snEmpty), v(0))
	for _, f := range []string{"%s|%s|%s", "%10s|%-3s|%5s", "%s", "%pks %pks %pks", "%pI4 %pi4 %pI6", "%pi6"} {
		args := strs
		if strings.Contains(f, "pI") || strings.Contains(f, "pi") {
			args = a3(pk(snIPv4), pk(snIPv4), pk(snIPv6))
			if f == "%pi6" {
				args = a3(pk(snIPv6), v(0), v(0))
			}
		}
		cs = append(cs, printkCase{format: f, args: args})
	}
	cs = append(cs,
		printkCase{format: "%pI4", args: a3(v(0), v(0), v(0))},
		printkCase{format: "%s", args: a3(v(0xdead), v(0), v(0))},
		// fmt_size: without the NUL, with bytes after it, short.
		printkCase{format: "no nul", size: -1, args: ints},
		printkCase{format: "after nul", size: 8, args: ints},
		printkCase{format: "%d", size: 3, args: ints},
	)
	// A marker per run and case, so that the trace buffer's lines of
	// earlier runs and of other cases do not count.
	run := strconv.FormatUint(rand.Uint64()%(36*36*36*36*36*36), 36)
	var cases []kcase
	for i, c := range cs {
		marker := fmt.Sprintf("skg%s.%d:", run, i)
		f := marker + c.format
		size := len(f) + 1
		switch {
		case c.size < 0:
			size = len(f)
		case c.size > 0 && c.size < 8:
			size = c.size
		case c.size > 0:
			size += c.size
		}
		rodata := append([]byte(f), 0)
		rodata = append(rodata, make([]byte, 8+8-len(rodata)%8)...)
		name := fmt.Sprintf("trace_printk/%q/", c.format)
		for _, a := range c.args {
			if a.ptr >= 0 {
				name += fmt.Sprintf("&%d,", a.ptr)
			} else {
				name += fmt.Sprintf("%#x,", a.val)
			}
		}
		if c.size != 0 {
			name += fmt.Sprintf("/size=%d", size)
		}
		cases = append(cases, kcase{name: name, body: printkProgram(size, c.args), rodata: rodata, mem: snprintfMem(), marker: marker, hashed: c.hashed})
	}
	return cases
}

// ---- clocks, random numbers, CPU and thread

// varyingCases call the helpers whose results differ from run to run and
// compare what the kernel guarantees of them: ktime_get_ns within the
// clock readings around the run and not decreasing, ktime_get_boot_ns
// within its own and not behind ktime_get_ns, get_prandom_u32 32 bits,
// get_smp_processor_id the CPU (0, where the test runs the kernel's
// program and the runtime's one CPU), get_current_pid_tgid the process
// and the thread that ran the program, the same for two calls (the
// translations run in the harness's process on threads the test does not
// know: there its halves are only checked to be nonzero).
func varyingCases() []kcase {
	r0, r6 := ebpfasm.R0, ebpfasm.R6
	call := func(fn ebpfasm.BuiltinFunc, at int16) ebpfasm.Instructions {
		return ebpfasm.Instructions{fn.Call(), ebpfasm.StoreMem(r6, at, r0, ebpfasm.DWord)}
	}
	p := ebpfasm.Instructions{ebpfasm.Mov.Reg(r6, ebpfasm.R1)}
	p = append(p, call(ebpfasm.FnKtimeGetNs, 0)...)
	p = append(p, call(ebpfasm.FnKtimeGetNs, 8)...)
	p = append(p, call(ebpfasm.FnKtimeGetBootNs, 16)...)
	for k := range 3 {
		p = append(p, call(ebpfasm.FnGetPrandomU32, int16(24+8*k))...)
	}
	p = append(p, call(ebpfasm.FnGetSmpProcessorId, 48)...)
	p = append(p, call(ebpfasm.FnGetCurrentPidTgid, 56)...)
	p = append(p, call(ebpfasm.FnGetCurrentPidTgid, 64)...)
	p = append(p, ebpfasm.Mov.Imm(r0, 0), ebpfasm.Return())
	vary := func(mem []byte, env runEnv) {
		word := func(i int) uint64 { return binary.LittleEndian.Uint64(mem[8*i:]) }
		t1, t2, boot := word(0), word(1), word(2)
		r1, r2, r3 := word(3), word(4), word(5)
		id1, id2 := word(7), word(8)
		held := []bool{
			env.mono[0] <= t1 && t1 <= t2,
			t2 <= env.mono[1],
			env.boot[0] <= boot && boot <= env.boot[1] && boot >= t2,
			r1>>32 == 0, r2>>32 == 0, r3>>32 == 0 && (r1 != r2 || r2 != r3),
			false, // the CPU: compared as it is
			id1 == id2 && (env.pid == 0 && id1>>32 != 0 || id1>>32 == uint64(env.pid)) && (env.tid == 0 && uint32(id1) != 0 || uint32(id1) == uint32(env.tid)),
			id1 == id2,
		}
		for i, ok := range held {
			if ok {
				binary.LittleEndian.PutUint64(mem[8*i:], 1)
			}
		}
	}
	return []kcase{{name: "varying/all", body: p, rodata: make([]byte, 8), mem: make([]byte, 72), vary: vary}}
}
