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
// BufferProgram, and report.go the built-ins of skelgen.h.
//
// It imports only the runtime package, cilium/ebpf and the standard library,
// so a generated package can carry a copy of it.
package bridge
