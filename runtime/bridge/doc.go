// Package bridge is what a generated skelgen package needs at run time
// beyond the user-space VM: typed views of kernel maps, global variables and
// ring buffers, program handles typed by the kind their section names
// (kinds.go: KindOf reads the section as libbpf does, a Tracepoint or an XDP
// handle has that kind's Attach and nothing else; attach*.go hold the
// attach logic, once for every skeleton), and
// (for ubpf/ programs) loading from the embedded object and binding kernel
// maps to the VM. Before load, ProgramSpec switches programs off
// (autoload) and MapSpec sizes maps; after it, typed readers return
// Records of any length (record.go).
//
// Typed views convert between Go values and map bytes by reinterpreting the
// value's memory. This is exact because skelgen generates Go types with the C
// layout of the object's BTF (asserted at compile time in the generated code)
// and guards each generated file with build constraints for the object's byte
// order. T must therefore be a fixed-size type without Go pointers: the
// generated structs, sized integers, floats, bools and arrays of them.
//
// Files follow the seams: set.go loads an object and closes it; maps.go,
// percpu.go, mapofmaps.go, stacks.go, readers.go and vars.go are the typed
// views; user.go builds the user-space half (runtime maps for the maps only
// user programs use), kernelmaps.go adapts kernel maps to the runtime's Map
// (mmapped arrays, system calls), convert.go turns a ubpf/ program of the
// object into the runtime's ProgramSpec, userprog.go is UserProgram and
// BufferProgram, lifetime.go orders Close after the calls in progress,
// report.go the built-ins of skelgen.h, hooks.go, serve.go and actions.go
// the tool that Serve runs, and kernelbtf.go chooses the
// kernel BTF the kernel programs are relocated against: the options'
// KernelTypes or KernelBTF file, else the running kernel's own BTF, else
// the minimal BTF a skeleton generated with -btf-for carries for the
// running kernel's release (WithKernelBTF), or the one Options.Kernel
// names.
//
// Objects are parsed by ParseObject (spec.go), which reads what libbpf
// reads and cilium/ebpf refuses: maps defined __weak, __weak .kconfig
// externs, hidden global functions (verified as static, in their
// callers' context). At Load, kconfig.go gives the .kconfig externs the
// kernel and user-space programs read libbpf's values (in process too; a
// translation is made with zeros in their place): from the kernel's configuration
// (/boot/config-<release> or /proc/config.gz), LINUX_KERNEL_VERSION,
// LINUX_HAS_BPF_COOKIE and LINUX_HAS_SYSCALL_WRAPPER; zero for a __weak
// extern the kernel does not have, an error naming a strong one. That
// support is a Feature, Kconfig, which the skeleton of an object with
// .kconfig externs passes to ParseObject: a runtime copy keeps kconfig.go
// only in modules where a skeleton names it, as it keeps the user-space
// programs' views of kernel maps (kernelmaps.go) only where Load, not
// LoadKernelOnly, is named (userParts), the hooks' reading (hooks.go)
// only with the VM (programs.hooks), and the reading of carried kernel
// BTF only where WithKernelBTF is named.
// usdt.go reads a binary's USDT notes and argument specifications for
// AttachUSDT, which attaches usdt.bpf.h programs as libbpf does; iter.go
// and iter_attach.go are the iterators' Attach and Open; attach_kinds.go
// the Attach of the other section kinds whose target the section does not
// name or names in a pattern (ksyscall's wrapper, multi-probes' globs,
// perf events per CPU, sockmaps, network namespaces, netfilter, netkit).
//
// A loaded object's life (lifetime.go): runs of user programs and typed
// calls on maps, variables and readers are counted while they go on. Close
// makes every later one fail with ErrClosed at once, waits for those in
// progress and then releases the object (unmaps kernel maps' memory,
// closes the collection and the readers). Host functions are the host's
// Go code in the middle of a run, and may call Close or Run themselves: a
// run inside a host function does not hold Close back, fails with
// ErrClosed when its host function returns after Close, and the release
// waits for it to end. Run never waits for another run (userprog.go): a
// program has a few run states, its seats, one per processor (GOMAXPROCS
// when it is loaded, at least 2), the first its own. A run takes a free
// seat, the one its processor used last once two runs have met, and when
// every seat is busy (more goroutines in runs, or runs whose host
// functions call Run) it runs on a clone. So no call waits for another
// that waits for it, and Close from anywhere returns; and runs in several
// goroutines at once touch no memory in common but the maps. A run on a
// seat is counted by the flag that marks the seat busy, so that Run costs,
// beyond the run itself, a compare-and-swap and a store (BenchmarkRun,
// BenchmarkSeatPair); a run on a clone is counted apart and costs more.
//
// # Tools: hooks, actions and Serve
//
// A skeleton's Serve method runs the object as a tool through Tool
// (serve.go): the user programs in hook sections (hooks.go) run at points
// of its life, and may call the actions of skelgen.h (actions.go). Serve
// attaches the programs AttachAll attaches, runs ubpf/begin, starts one
// reader goroutine per ring buffer or perf event array that has a record
// hook or a Go callback, and one ticker per ubpf/interval/<d> hook. On stop
// — ctx done, skelgen_stop, a hook's error, or SIGINT/SIGTERM when asked —
// it closes every link of the object, waits for kernel programs in flight
// (an RCU grace period), drains the readers, runs ubpf/end and closes the
// object. Every hook and every Go callback runs on the goroutine that
// called Serve, one at a time: a record hook never runs beside an interval
// hook or a callback, and they share maps and globals without locks.
//
//	hook              runs                                  on error                 budget
//	ubpf/begin        once, after attach, before any        Serve returns it; no     Options.Budget
//	                  record is read                        record is read, end
//	                                                        does not run
//	ubpf/interval/d   every d (time.ParseDuration), a tick  the tool stops with it;  per run
//	                  missed while Serve's goroutine is     end runs
//	                  busy is dropped; not after the stop
//	ubpf/record/m     each record of stream m in the order  the tool stops with it;  per record
//	                  read, with it as context (zero-filled this record and all
//	                  to the context struct, r2 = its real  later ones are dropped;
//	                  length); 0 drops it, else the Go      end runs
//	                  callback gets it with the hook's
//	                  writes
//	ubpf/lost/m       each notice of samples the kernel     as ubpf/record/m         per notice
//	                  lost on perf event array m (struct
//	                  skelgen_lost), before Lost
//	ubpf/end          once on stop, after detach and the    Serve returns it unless  per run
//	                  last record; then the object closes   it has an earlier error
//
// Records: every record a kernel program wrote before its link closed
// reaches the record hook before end runs (none is lost to the stop), and
// none reaches a hook or callback after end begins. Records a hook writes
// during end to a ring buffer in the process are not read; skelgen_output
// hands a record to the Go callback at once, during end too. The kernel
// writes its notice of lost perf samples when the buffer next has room,
// so samples lost just before the stop may be counted nowhere.
//
// Actions: skelgen_stop(code) stops the tool (a non-zero code makes
// Serve's error an *ExitError); skelgen_attach and skelgen_detach attach
// and detach a program Serve attaches, by C name (in process they keep the
// bookkeeping only); skelgen_output emits a record to a stream's Go
// callback. Outside Serve each returns -EOPNOTSUPP. To steer kernel
// programs, a hook writes a map or global they read: both sides share it.
//
// It imports only the runtime package, cilium/ebpf and the standard library,
// so a generated package can carry a copy of it: the declarations the
// module's Go files name and those these need. Its user-program support
// (Load, UserProgram, hooks' runs, actions, the built-ins, RawProgram) is
// reached from no kernel-only skeleton's declarations (no method of a type
// LoadKernelOnly's set holds names it), so the copy of a module whose
// objects are kernel-only carries neither it nor the runtime's VM.
package bridge
