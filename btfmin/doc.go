// Package btfmin writes a minimal C header of preserve_access_index
// declarations that replaces a full vmlinux.h for a set of BPF programs,
// and checks that it is equivalent.
//
// The model: a BPF object compiled against vmlinux.h carries, in its BTF,
// the kernel types as the compiler saw them, and in .BTF.ext one CO-RE
// relocation for every access the loader must adjust to the running
// kernel (kind, root type, access string). Those relocations say which
// members of which types the programs touch; the maps, globals, __ksym
// externs and program prototypes say which types must be complete. btfmin
// keeps exactly that (ReadObject, then the chooser), and writes it as C in
// a deterministic order (Generate). What the object cannot show — enum
// constants used as plain numbers, types used only in sizeof or as
// locals, typedefs that libbpf's headers use — is found by compiling the
// source against the header and adding what clang reports missing from a
// kernel BTF, until it compiles (Config.Source).
//
// FromSource needs no object at all: it completes an empty header from the
// kernel BTF until the source compiles, compiles the object against that
// draft and minimises from it, so a program never needs a full vmlinux.h.
//
// A header this package wrote can stand in for the kernel BTF it was made
// from (HeaderSpec, Config.KernelSpecs), on a machine without kernel BTF:
// regenerated against its own types it gives itself back while the source
// asks for nothing it lacks, and names what it lacks otherwise
// (MissingError, each name with the place clang reported its use).
//
// One header can serve several architectures (Config.Arches): libbpf's
// bpf_tracing.h reads a probe's registers through a struct of the
// architecture named by -D__TARGET_ARCH_<arch> (pt_regs, user_pt_regs,
// user_regs_struct), and one kernel BTF has one architecture's. When the
// source reads registers, the header ends with a chain of #if
// defined(__TARGET_ARCH_<arch>) sections, one per architecture: the
// kernel BTF's own (told by the members of its pt_regs) whole from the
// kernel BTF and marked as such, every other as its kernel declares it
// (regs.go, member names and order of the kernel's headers). A compile
// without any __TARGET_ARCH_ macro sees none of them. HeaderSpec compiles
// a header for its marked architecture, so a committed header still
// stands in for the kernel BTF.
//
// Verify proves the result: it recompiles the source with the new header
// and resolves every CO-RE relocation of the original and the new object
// against each kernel BTF with cilium/ebpf's CO-RE engine; the two must
// agree on every (kind, root type, field path) → value.
//
// CheckKernels is the kernel matrix: every kernel program's CO-RE
// relocations resolved against each kernel of a directory (ReadKernelDir:
// raw BTF, BTFHub's .btf.tar.xz, vmlinux ELF), with, for each that does
// not resolve, the source line, the access path and what the kernel has
// instead (explain). A failure on an instruction that cannot run on that
// kernel is Guarded: liveInstructions propagates the constants the
// kernel's relocations load (bpf_core_field_exists giving 0) through
// registers and drops the branches they decide, as the verifier does.
// The matrix also checks each program's attach target where the kernel's
// BTF names it (attachTarget: functions, LSM hooks, iterators,
// tracepoints).
//
// MinimalKernelBTF is bpftool gen min_core_btf: the part of a kernel's
// BTF an object's relocations need (members on access paths, shells of
// the types reached otherwise), which cilium/ebpf can take as
// KernelTypes on a kernel built without BTF; skelgen -btf-for embeds it
// in skeletons, so its bytes depend only on the object and the kernel.
//
// Two modes: Compact writes only the members in use (the style of perf's
// hand-written headers); Exact keeps them at their original offsets with
// padding so that the recompiled instructions are byte-identical.
//
// Which types belong in the header and which the source defines itself
// is decided by name against the kernel BTF: ___flavor types and types
// the kernel lacks are the source's. Types whose layout the source fixes
// at compile time (sizeof, offsetof, local copies, by-value members of the
// source's own structs, map keys and values, globals) are kept whole, as
// are types read by value through CO-RE; everything else keeps only the
// members that relocations or clang ask for.
//
// Every name the header writes comes from BTF, an object's or a kernel
// BTF file's, and neither is trusted: struct, union, enum and typedef
// names, members, enumerators and function-prototype parameters must be
// C identifiers ([A-Za-z_][A-Za-z0-9_]*, not a C11, C23 or GNU keyword
// such as int, typeof or __attribute__, nor a macro the preprocessor or
// clang defines for BPF such as __LINE__, _Pragma or __bpf__; bool, true
// and false, which the kernel declares itself, are allowed), and integer
// and float types must be named with C's basic type words ("long
// unsigned int"). Anonymous
// structs, unions and enums, unnamed bit-fields and unnamed parameters
// stay as they are; an anonymous typedef, enumerator or member of
// another type is an error. Any other name fails Generate and FromSource
// before a header holding it is written or compiled (a name holding a
// newline could otherwise add #include or #error lines that clang
// obeys), with an error naming the BTF, the declaration and the name
// quoted: kernel BTF /path: struct "task_struct" member "pid\n#include
// ...": not a C identifier. Messages print every name from BTF or an
// object quoted, so no raw control character reaches a terminal.
//
// Types are as hostile as names: one that contains itself by value,
// refers to itself without a named struct or union in between (a cyclic
// typedef) or nests deeper than 1024 levels (real kernels nest 32) is an
// error naming the BTF and the type, so that every walk over types ends,
// and each type is walked once, so that time is linear in the input; C
// spells anonymous types and function prototypes out at each use, so a
// header whose text would pass 16 MB is an error too. An
// object's BTF is checked whole when it is read, a kernel BTF's type by
// type as the header reaches them. Before that, since cilium/ebpf decodes
// a type and all it refers to recursively, BTF whose types refer to each
// other more than 32768 levels deep is refused unread (loadBTF).
//
// Nothing here writes files: Generate returns bytes, so callers (the CLI,
// the skeleton generator's staleness check) decide where they go.
package btfmin
