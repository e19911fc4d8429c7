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
// Verify proves the result: it recompiles the source with the new header
// and resolves every CO-RE relocation of the original and the new object
// against each kernel BTF with cilium/ebpf's CO-RE engine; the two must
// agree on every (kind, root type, field path) → value.
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
// Nothing here writes files: Generate returns bytes, so callers (the CLI,
// the skeleton generator's staleness check) decide where they go.
package btfmin
