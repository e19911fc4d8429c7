// Package bridge is what a generated skelgen package needs at run time
// beyond the user-space VM: typed views of kernel maps, global variables and
// ring buffers, the attach helpers behind each program's Attach method, and
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
// BufferProgram, lifetime.go orders Close after the calls in progress, and
// report.go the built-ins of skelgen.h.
//
// Objects are parsed by ParseObject (spec.go), which reads what libbpf
// reads and cilium/ebpf refuses: maps defined __weak, __weak .kconfig
// externs, hidden global functions (verified as static, in their
// callers' context). At Load, kconfig.go gives the .kconfig externs the
// kernel programs read libbpf's values: from the kernel's configuration
// (/boot/config-<release> or /proc/config.gz), LINUX_KERNEL_VERSION,
// LINUX_HAS_BPF_COOKIE and LINUX_HAS_SYSCALL_WRAPPER; zero for a __weak
// extern the kernel does not have, an error naming a strong one.
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
// waits for it to end. Run never waits for another run: when the
// program's own run state is busy (a run in another goroutine, or the run
// whose host function calls Run) it runs on a clone. So no call waits for
// another that waits for it, and Close from anywhere returns.
//
// It imports only the runtime package, cilium/ebpf and the standard library,
// so a generated package can carry a copy of it.
package bridge
