// Package runtime is skelgen's user-space eBPF virtual machine: it
// validates and runs the programs of an object's SEC("ubpf/...") sections
// inside the Go process. It uses only the standard library and no other
// skelgen package, so generated packages can carry a copy of it.
//
// Its maps (NewMap and its kin, MapMemory, the errors) stand alone: a
// module's copy keeps the declarations its Go files name and those these
// need (see skelgen's gen package), so a module whose objects have no
// user-space programs carries the maps without the VM.
//
// # Model
//
// A program arrives as raw instruction slots (DecodeInstructions, either
// byte order) in a ProgramSpec together with the maps it references and the
// names of the extern (__ksym) functions it calls. Load checks everything
// once — opcodes, registers, unused fields that must be zero, jump and call
// targets, lddw pairs, helpers and externs — and rejects a bad program with a
// *ValidationError naming the instruction. It then pre-decodes each slot into
// a 16-byte form (lddw merged, jumps as byte distances, division and
// modulo by an immediate zero replaced by their effect, RFC variants that
// differ by offset or immediate given opcodes of their own), so the
// interpreter is one dense switch on the opcode byte. Common pairs are
// fused into one dispatch: the loop tail "add rX, imm; jcc rX, ..." (and
// "add rX, imm; jge rX, rY; jlt rX, imm", clang's i < len && i < MAX), the
// three-address form "mov rX, rY; op rX, ..." (ALU64), a load accumulated
// into another register "ldx rX, [..]; add/xor/or rZ, rX", the end of an
// if branch "op rX, imm; ja", two or three jumps of one kind on one register
// against immediates (range tests, switch search trees), a move beside an
// independent increment "mov rX, rY; add rZ, imm", a network-order field
// "ldxh/ldxw rX, [..]; be16/be32 rX"; and as triples the bit test
// "mov rX, rY; rsh/and rX, k; jeq/jne rX, c" and a byte's range test
// "mov32 wX, wY; add32 wX, imm; and32 wX, imm" ((u8)(c - 'a') < 26). Only
// the first slot is rewritten: the others keep their own instructions for code that
// jumps to them, and counts, faults and budget errors stay per instruction,
// as tests compare runs with and without fusion. The budget is kept as the
// address of the first slot where a control transfer would overrun it, so
// a taken jump costs a comparison and an addition. Rare operations (division
// and modulo, movsx, byte swaps, negation, most arithmetic shifts) run
// outside the main switch, which keeps it under the size past which the Go
// compiler stops inlining the memory accessors into it.
//
// The ISA is RFC 9669 v1–v4 plus callx: ALU and ALU64, JMP and JMP32,
// signed division and modulo, movsx, ldsx, bswap and le/be, gotol (JMP32 ja),
// all atomics, lddw with pseudo sources, bpf-to-bpf calls (MaxFrames frames
// of StackSize bytes, r6–r9 preserved) and callx (register in dst as clang
// emits it, or in imm; a function address makes a bpf-to-bpf call, a small
// number calls that helper id). Division by zero yields 0 and modulo by zero
// leaves the dividend (truncated to 32 bits for the 32-bit forms). ALU
// operations with r10 as source other than 64-bit mov, add and sub are
// rejected, as the kernel rejects such pointer arithmetic.
//
// # Memory
//
// Addresses are tagged 64-bit values: the region index in the upper 32 bits,
// the offset in the lower. Region 0 is unmapped so NULL faults; region 1 is
// the context passed to Run; regions 2..9 are the stack frames (a frame is
// mapped once a call reaches its depth, and a run starts with every frame
// the previous run used cleared, so that nothing written into a stack, even
// through a forged address, outlives its run: cleared from the lowest slot
// the program stores to through r10 up, the rest of a frame never being
// written, or whole when the program stores through another register or
// calls a helper, an extern or callx; a program that writes no frame
// clears nothing); then come
// the map values that lddw references (global sections such as .data and
// .rodata are one-entry array maps, as in libbpf); then the values of the
// runtime's hash maps and arrays that bpf_map_lookup_elem returned, each
// mapped the first time the run state looks it up and kept from then on,
// up to 16384 of them (a value's buffer belongs to its slot or element for
// the map's life, so the region always names that slot's value, as a
// pointer into a preallocated kernel map does; the tables that find them
// grow with the values kept, not with the map's max_entries);
// then regions created during a run (lookups after the run made a region of
// its own, ring buffer reservations, anything a helper maps with
// AddRegion), dropped when the run ends. Every load and store is bounds-checked against its region; a bad
// access ends the run with a *MemoryError naming region, offset, size and
// instruction. Read-only regions (.rodata, maps with FlagRdonlyProg) have no
// write view. Map handles and function addresses are tagged values outside
// the region table, so dereferencing them faults too.
//
// The checked accessors exist in two forms: Read64/Write64 and friends
// return ok, as the interpreter uses them; Load64At/Store64At and friends
// (and Atomic32At/Atomic64At for atomics), which translated code calls,
// carry the instruction index and panic with a small value that
// Compiled.Run turns into the same *MemoryError. All of them inline. SpanAt and
// LoopTrips let translated loops check a whole span of a region once
// before the loop; a Window of the span (WindowOf) then gives, with one
// compare, the bytes that the accesses of one iteration reach through one
// register, which the translation reads and writes as a fixed-size array. Bytes, WritableBytes,
// CBytes and CString give helpers checked slices.
//
// # Atomics
//
// BPF_ATOMIC instructions (add, or, and, xor with and without fetch, xchg,
// cmpxchg; 32 and 64 bits) are atomic against every other writer of their
// memory, as on the kernel's JIT: other runs and their clones, Go code, and
// kernel programs on other CPUs writing memory mapped from a kernel map
// (.bss, .data, BPF_F_MMAPABLE arrays), as well as the bytes of a context
// that several goroutines pass to Run. Both engines run them with
// sync/atomic; translated code calls Add64, FetchAdd64, Swap32, CmpXchg64
// and their siblings on the cell Atomic64At or Atomic32At checks. Two
// kinds of memory take a plain read-modify-write instead, because no other
// writer can reach them while the run executes: the stack frames, and the
// values and global sections of the program's SharedMaps, whose locks the
// run holds (Memory.Owned64, which translated code asks before an add,
// the common atomic; it then calls PlainAdd64). A 32-bit fetch zero-extends the old value into its
// register; cmpxchg compares the cell with r0 and loads the old value into
// r0 whether or not it stores.
//
// A cell must be aligned to its width, as an offset in its region (the
// kernel's verifier refuses a misaligned atomic) and in host memory (which
// sync/atomic needs): a misaligned atomic is a *MemoryError with
// Misaligned set. Map values, globals and stack frames are aligned; a
// context given to Run must be aligned for the atomics the program makes on
// it (any []byte made with make is, from 16 bytes or in multiples of 8).
// Memory holds little-endian values on every host; on a big-endian host
// each atomic is a compare-and-swap loop on the byte-swapped value, atomic
// against the runtime's other atomics and against writers that store
// little-endian values, which a kernel of that byte order does not.
//
// # Translated code
//
// Package gen/aot translates a program into Go functions that run against
// a Program's Machine: registers are locals, StackTop gives r10 and Frame
// the stack frame, CheckBudget and Machine.CheckDepth fail the run where the
// interpreter would, CallAt and CallX call helpers, externs and functions
// as the interpreter resolves them. Program.Bind pairs a Program with its
// Translation after checking every lddw value the translation compiled in
// (Program.Imm64), and Compiled.Run runs it with the interpreter's
// context, stack, budget and errors.
//
// Calls of map_lookup_elem, map_update_elem and map_delete_elem whose
// arguments the straight-line code before them fixes (r1 an lddw of a map
// handle, r2 and an update's r3 r10 plus constants, inside the frame, an
// update's r4 a constant; Program.MapSite) go, in the interpreter as in
// translations, to Machine.Lookup32 or Lookup64, Update32 or Update64,
// Delete32 or Delete64, with the map's index and the key read from the
// frame: leaf functions with no indirect call that do what the built-in
// helper does, with the same work charged, r0 and map state, or decline,
// changing nothing, for the helper bound at the call to do it. Lookups
// answer for a missing key and a value the run state keeps mapped; updates
// and deletes for the runtime's hash maps (LRU and per-CPU too: they run
// the map's own update and delete once the key is found) and arrays, but
// not for an insert that would take memory, a read-only map, another
// helper bound, or outside a run (which holds the maps' locks). A deleted
// entry's kept region stays, as with the helper: it names the slot, whose
// value stays as it was and which a later insert may reuse.
//
// # Instructions
//
// Opcode names every opcode the runtime accepts (OpAddImm, OpJeq32Reg,
// OpLdxw, ...); the validator, the interpreter's switch, the translator and
// the disassembler all speak these names. Instruction.String and
// Disassemble print instructions in the assembly dialect of package asm
// (the bpf_conformance suite's), so a listing assembles back to the same
// slots.
//
// # Budget
//
// Options.Budget bounds the instruction slots each run executes. It is
// charged where control transfers — taken jumps, calls, exits — with the
// length of the straight-line run just finished, so the count is exact
// (Machine.Executed) while other instructions pay nothing. Running out is
// ErrBudget, a call chain deeper than MaxFrames ErrCallDepth, both wrapped
// in a *RunError with the instruction index.
//
// # Helpers, externs, maps
//
// A HelperSet maps kernel helper ids to Funcs; Builtins provides map lookup,
// update and delete, ktime_get_ns, trace_printk (to Options.Output),
// get_prandom_u32, get_smp_processor_id (0), get_current_pid_tgid,
// ktime_get_boot_ns, snprintf, strncmp and the ring buffer helpers. Register
// replaces an id. The built-ins return what Linux 6.18's helpers return
// (gen/aot's TestHelpersKernelDifferential compares them with the kernel):
// a ring buffer gives its records in the order they were reserved and
// holds MaxEntries-1 bytes of them; snprintf and trace_printk take the
// kernel's formats (see Machine.Format), and Load refuses a program whose
// constant snprintf format the kernel's verifier would refuse; trace_printk
// returns the text's length (-EINVAL for a format without a NUL in its
// fmt_size bytes) and writes its first 1023 bytes, a line to a call;
// strncmp returns -1, 0 or 1; map updates check their flags in the
// kernel's order, lookups and deletes of missing keys and array indexes
// return what the kernel's do (NULL, -ENOENT; -EINVAL for a delete from
// an array). The machine has one CPU: get_smp_processor_id is 0 and a
// per-CPU map has one value a key, as a kernel program run on CPU 0 sees.
// ktime_get_ns and ktime_get_boot_ns read CLOCK_MONOTONIC and
// CLOCK_BOOTTIME, the kernel helpers' clocks; get_current_pid_tgid is the
// process's id and the calling thread's, as BPF_PROG_TEST_RUN gives them
// in the kernel (a goroutine may run on another thread at each run);
// get_prandom_u32 is 32 random bits. Externs bind by name through Options.Externs (or
// HelperSet.RegisterExtern); an unbound extern is a load error.
//
// Map is an interface so that a kernel map can stand behind it; NewMap makes
// user-space hash, array, per-CPU hash and array (one CPU), LRU hash and
// ring buffer maps. Lookups of user-space maps return live value memory;
// errors map to the kernel's negative errno values for the program. A value
// looked up again in the same run gets the region it already has (the hash
// map's slot remembers it, other maps go through a small cache by buffer
// address), so a counting loop does not grow the region table. A deleted
// hash entry's value stays mapped, unchanged, until the run ends; an insert
// may reuse its slot in the same run, and the old pointer then sees the new
// value, as with the kernel's preallocated maps. An update of a key a hash
// or LRU hash map holds puts the value in another slot, which takes the
// old one's place, as the kernel puts a new element in the old one's
// place: a pointer looked up before the update reads the old value, and a
// write through it no longer reaches the map. The old slot is reused as
// the kernel reuses the old element: by the next such update of a
// preallocated hash map (the kernel's spare element), by the next update
// or insert of the others; the pointer then sees that value. Arrays and
// per-CPU hash maps update in place, as in the kernel. An update of a key
// a full map holds does not fail with -E2BIG: a hash map has a slot more
// than MaxEntries, and an LRU map, as the kernel's, takes a free slot
// before it looks the key up (a per-CPU one unless the flags are
// BPF_EXIST), evicting the least recently used entry when none is free,
// even when the update then fails or the key is the one evicted. A hash
// map's NextKey follows insertion order (a replacement keeps the key's
// place), one step per call however many entries the map held before; a
// key not in the map gives the first key, as in the kernel.
//
// NewMap refuses the key and value sizes the kernel refuses (hash maps:
// key plus value under 4 MiB - 48; per-CPU values: 32 KiB; arrays: values
// up to 2^31 - 1 bytes). NewMapIn counts a map's memory in a MapMemory
// that the maps of one object share (the default limit,
// DefaultMapMemory, is 1 GiB): arrays and ring buffers count their size
// and hash maps the most they can grow to, when made, as the kernel
// preallocates them, so a map that does not fit fails there, naming it;
// BPF_F_NO_PREALLOC hash maps count memory as they grow, and an update
// the limit cannot hold fails with ErrNoMemory, -ENOMEM for the program.
//
// Read-only maps (MapSpec.ReadOnly: BPF_F_RDONLY_PROG, .rodata and
// .rodata.*) give read-only regions to lddw and to bpf_map_lookup_elem
// alike, and the update and delete helpers return -EPERM for them, so a
// write is a *MemoryError whatever memory stands behind the map (a kernel
// map mapped read-only, say).
//
// # Helpers' work
//
// Helpers and built-ins whose work grows with their input charge it with
// Machine.Charge: one unit per map entry stepped over and one per
// BytesPerUnit (8) bytes copied, compared, hashed, cleared, allocated or
// formatted, rounded down, so 4- and 8-byte keys and small values cost
// next to nothing. The map helpers charge the key twice (hashed, then
// compared), the value they copy, and twice the memory a new hash
// entry allocates; bpf_strncmp what it scans and compares. A run may spend as
// many units as its instruction budget, on a meter of its own (translated
// code keeps the instruction budget in a local), so it does at most twice
// its budget in instructions and units. A unit takes about as long as an
// interpreted instruction when bytes are copied, compared or hashed, and up
// to about three when a hash map allocates new entries (BenchmarkHelperWork
// against BenchmarkWorkloads' ns/insn), so a run's time stays within about
// four times what its budget of instructions takes, beyond the fixed cost
// of each helper call. Nothing allocates in proportion to a map's
// max_entries.
//
// # Concurrency
//
// A Program runs one call at a time and allocates nothing per run on the
// interpreter's hot path; Clone gives another goroutine its own run state.
// User-space hash and array maps are SharedMaps: a run holds the lock of
// each one its program uses from its start to its end (released around
// calls to host functions, so that they may use the maps from Go), in one
// global order, and Go code holds it around each access. Runs sharing a map take
// turns; runs sharing none run in parallel. This gives the kernel's
// contract — no data races, no corruption, a looked-up value stays valid
// memory for the whole run — at the cost of one lock per map per run, not
// per helper call. A value a host function reads through a pointer while
// the maps are released may be written meanwhile, as on another CPU in the
// kernel. Program.Close makes later runs fail with ErrClosed, for owners
// that release memory the maps gave the program.
//
// # Cost of a run
//
// Beyond its instructions, a run maps its context, refills its budget and
// checks that the program is not closed; Compiled.Run also defers one
// function, which recovers the translation's traps and ends a run whose
// goroutine a host function ended (runtime.Goexit); a run that returns
// only passes through it. Starting and ending a run inline into both
// engines' Run (TestRunStartAndEndInline). A program that uses no
// SharedMap, writes no stack frame and calls no helper pays nothing else
// (no lock, no clearing, no region to drop): about the cost of a deferred
// call (BenchmarkRunOverhead here and in internal/aotbench). Locks, the
// stack's clearing and the dropping of regions and ring buffer
// reservations are paid by the programs that need them. A frame is
// cleared between runs from the lowest slot the program's own stores
// through r10 reach; the whole frame only when it stores through another
// register, or calls callx, an extern, or a helper that may write what it
// is given (snprintf, and any helper the host registers: the runtime's
// other helpers write no frame).
package runtime
