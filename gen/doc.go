// Package gen reads BPF objects and writes skelgen's Go skeletons.
//
// # Model
//
// Generate is one run of the main command: it compiles a .bpf.c input with
// clang (Compile; fixed flags make the object independent of the machine
// and directory) or takes a .bpf.o, parses each object (ReadObject:
// ELF checks first, then cilium/ebpf's CollectionSpec), drops its DWARF
// (StripDWARF, strip.go: BTF and .BTF.ext stay), and returns the
// files to write — it writes nothing itself; WriteFiles writes those whose
// bytes changed through temporary files and renames. It renames only over
// a regular file (checkOutput): an output path holding a symbolic link
// (to a regular file too), a device, a FIFO, a socket or a directory is an
// error and nothing is written, and old outputs are read only when they
// are regular files (readOutput), so a FIFO cannot block a run. The
// generation cache's entries follow the same rule. Check runs Generate in
// memory for every skelgen go:generate line of a set of packages and
// compares with the files on disk; a line it cannot rebuild (no compiler)
// fails unless CheckOptions.Committed says to trust the committed objects.
//
// The targets of a C source compile at the same time, one clang run each
// (compileTargets), and their warnings and errors come out in the
// targets' order. For each target (bpfel, bpfeb or a GOARCH) the outputs
// are the object and a Go file guarded by the target's build constraint:
//
//   - Skeleton writes the Go file with jennifer. collect.go decides the Go
//     shape of every map, program and variable; render.go writes one
//     function per section of the file, in the file's order: the user's
//     types, the embedded object, the Spec with typed variable, map
//     (sizes) and program (autoload) specs, Load, the Objects with typed
//     maps (runtime/bridge's Map, PerCPUMap, RingBuf, ...), program handles
//     typed by the kind their section names (runtime/bridge's Tracepoint,
//     XDP, ...: bridge.KindOf, attach.go), typed variables, user-space
//     programs (user.go) and the host interface their externs need, and
//     Serve with its Handlers (serve.go), the one call that runs the
//     object as a tool through runtime/bridge's Tool. The fields carry
//     their C names as tags (skelgen:"name"), and bridge.BindSpec and
//     bridge.Bind fill them: the package declares no type and no statement
//     per program or map, and no generic call is inlined into it, so that
//     its compile cost stays near bpf2go's (internal/weightbench measures
//     it). Each target's translation goes to a file of its own,
//     <stem>_<target>_aot.go. The regular parts (a struct field per map,
//     program and variable; the user's structs, enums
//     and accessor methods) are written as text already in gofmt's form and
//     spliced in after go/format has formatted the rest (verbatim.go); the
//     qualified names and the type expressions whose text is not known
//     are rendered by jennifer and written in gofmt's form by gofmtExpr
//     (gofmtexpr.go), go/format seeing only those it does not know:
//     formatting was most of the generator's time;
//   - TypeGen (types.go) writes Go types with the exact C layout of the
//     BTF types those reach, enums with a String method;
//   - consts.go finds the source's own constants in its text (#define
//     and anonymous enums at file scope), has clang evaluate them in a
//     probe compiled beside the object, for Go constants of their C types
//     named after the types, and its named enums for types generated
//     without -type;
//   - package gen/aot turns each ubpf/ program into Go functions that
//     the runtime binds at load (-aot; by default only the programs
//     that can run often: record hooks and those Go runs);
//   - with -runtime auto (the default) the package imports skelgen's
//     runtime where the module's go.mod requires skelgen's module, naming
//     the bridge's constant of this release (VersionConst), and vendors
//     it otherwise;
//   - with -runtime vendor the module gets one copy of the
//     runtime and bridge under <module root>/internal/skelgenrt
//     (vendor.go), from the sources those packages embed, shared by all its
//     skeleton packages, holding only what the module uses (prune.go): the
//     roots are the identifiers the module's Go files select from the
//     copy's packages (bridge.X, runtime.Y) — the skeletons, their
//     translations and the user's own code and tests, not the copy, nested
//     modules, vendor/, testdata/ or directories starting with . or _ —
//     counting the files the run writes as it writes them; the copy keeps
//     the declarations the roots name and, over the sources' syntax
//     (go/ast), those these name, a type with its exported methods and the
//     unexported ones something kept selects, every build-tag variant of a
//     name, const and var blocks whole; files left empty go, and so do the
//     imports they no longer use and the comments of what went. So a
//     kernel-only module gets no VM. The copy is a function of the skelgen
//     version and the roots: Check computes it as GenerateAll writes it,
//     once per module after all lines, and a file of the module that names
//     something the copy lacks makes the copy stale (generate adds it);
//     skelgen's own module imports the runtime instead;
//   - with -header, the minimal CO-RE header the source includes is
//     regenerated by btfmin (header.go), or made from the source alone
//     when it is missing or no longer compiles, and the objects are
//     compiled against the header the run writes; where the kernel BTF
//     file is missing, the committed header stands in for it and is kept
//     if it gives itself back (headerWithoutKernel), else the error names
//     what needs the kernel BTF and -btf. One header serves every target:
//     the GOARCH targets' architectures get register sections
//     (btfmin.Config.Arches), and #include <vmlinux.h> finds it as
//     "vmlinux.h" does (the header's and the source's directories are on
//     the <...> path, after the user's and the system's);
//   - with -kernels DIR, every object's kernel programs are checked
//     against each kernel BTF file of DIR before anything is written
//     (kernels.go, btfmin.CheckKernels): a program whose CO-RE
//     relocations fail unguarded on one fails the run with the matrix;
//   - with -btf-for DIR, each target's skeleton embeds
//     <stem>_<target>_btf.tar.gz (btffor.go, KernelBTFArchive): the
//     minimal BTF of its object for each kernel of DIR of its byte order
//     (btfmin.MinimalKernelBTF), one <release>.btf a kernel, identical
//     ones hard-linked, gzip-compressed, the same bytes for the same
//     inputs; <X>Kernels lists the releases and Load passes the archive
//     to bridge.WithKernelBTF. A run without the flag removes the archive
//     an earlier one wrote;
//   - a source that reads registers through bpf_tracing.h compiled for a
//     target without an architecture (bpfel, bpfeb) fails with libbpf's
//     "Must specify a BPF target arch" and a hint naming -target
//     amd64,arm64: the objects would not know which registers to read,
//     so skelgen does not guess;
//   - compile.go runs clang through internal/cc, the compiler definition
//     btfmin shares, and passes clang's diagnostics on as clang wrote them
//     (warnings to Config.Warn, errors inside the error); input.go turns first-try mistakes into clear errors;
//   - ring buffer and perf readers are typed by the record type the
//     source's bpf_ringbuf_reserve/output and bpf_perf_event_output calls
//     show (records.go) unless -type says otherwise; types the object's BTF
//     lacks (used or defined only inside functions) come from a second
//     compilation of the source and are kept in <stem>_<target>_types.btf
//     for Check without a compiler (sourcetypes.go). A record type is a
//     definition, not a tag: when the source defines a struct tag more
//     than once (in different functions), csource.go reads the source's
//     blocks and gives each call the definition C's scopes give it; that
//     definition is copied to file scope under a name of its own
//     (__skelgen_local_<len>_<function>_<tag>_<n>) for its BTF, and its
//     Go type is named after its function (<Stem><Function><Tag>, doc
//     comment "It is the struct event defined in function f"). skelgen
//     never picks a definition it cannot place: a call in a macro, -type
//     naming such a tag, or a BTF with two different types of the name
//     asked for are errors. -type MAP=T contradicting the record type the
//     source shows is an error naming both, unless written MAP=T!.
//
// # Names
//
// C members (of structs and unions), global variables, maps and programs
// get Go names by one rule (naming.go), in each scope: a struct's fields
// and methods; the Objects struct, whose fields are the maps and the
// programs and whose methods (Close, Collection, Variables, AttachAll,
// Serve) are reserved; the Variables struct.
//
//   - The plain name of a C name is GoName of it without its leading
//     underscores, then one underscore for each: pid_tgid is PidTgid, _x
//     is X_, __x is X__. It depends on the name alone, never on whether x
//     exists, so a Go name cannot be read as another C name (x is always
//     X, _x never is). Plain names have no underscore but at their end.
//   - A name whose plain name is unique in its scope gets it. When several
//     names share one (fooBar and foo_bar; x, X and x_; x2 and x_2) or the
//     scope reserves it (close: Close is a method), each of them gets its
//     spelled name instead: C_ followed by the C name as it is (C_fooBar,
//     C_foo_bar); a name of underscores only (_, __) has no plain name and
//     is Underscore_1, Underscore_2. Spelled names have an underscore
//     inside, so they are never plain names. The same C name twice (only
//     malformed BTF has that) and escapes of names that are not ASCII are
//     numbered C_x_2, ..., in the order of the C names.
//   - Names the generator adds come after a scope's C names and take _2,
//     _3 on a collision: bitfield storage BitsN, XBytes for a member Go
//     cannot align, setters SetX, string methods XString, a union's Raw.
//     Anonymous members are embedded under their type's name.
//
// The rule is injective in a scope and stable: adding a member (or map,
// program, variable) renames nothing, except names that then collide
// with it, which lose their plain name: code using the old name fails to
// compile, and never reads another member silently. Map key and value
// types are named after the map's Go name (XKey; X_Value of map _x). A
// field whose Go name is neither GoName of its member nor its spelled
// name (X_ of _x) says the member in its comment; maps, programs and
// variables name theirs in their doc comments.
//
// Output is deterministic: the same inputs give the same bytes on any
// machine, which is what makes Check possible.
//
// # Hostile input
//
// Every name and text of an object, a source or a kernel BTF may be
// hostile: generated packages are built and imported by other projects
// and CI jobs, from objects made elsewhere. Such text reaches generated Go
// in three forms only: as an identifier made by GoName (ASCII letters and
// digits; a non-ASCII rune becomes a word of its own, U and its code
// point, so no name can pass for another), as a string literal quoted by
// strconv, or inside a // line comment escaped by internal/gocomment
// (printable ASCII stays, every other byte is a Go escape: no newline can
// end the comment and start code, no line can be a directive such as
// //go:generate). The generator writes no /* */ comment.
// TestCommentsThroughGocomment requires that every comment the generator
// writes goes through gocomment; TestHostileNames and FuzzHostileName put
// hostile payloads into every name site of an object and require that the
// package builds, imports without running code of the object's and holds
// no declaration beyond those of the same object with plain names. The
// stem is a file name (no separator), the outputs are never written
// through a symbolic link, and errors quote names with %q.
package gen
