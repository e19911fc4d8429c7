package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// IsUserProgram reports whether a program runs in user space (section
// "ubpf" or "ubpf/<hook>") rather than in the kernel.
func IsUserProgram(p *ebpf.ProgramSpec) bool {
	return p.SectionName == "ubpf" || strings.HasPrefix(p.SectionName, "ubpf/")
}

// Options configure Load. The zero value loads the kernel part into the
// kernel and prints user programs' output to standard output. H is the
// type of Host: a generated skeleton's options are Options[<X>Host] when
// its user-space programs call host functions, else Options[NoHost], so
// that every skeleton's Load takes the same options.
type Options[H any] struct {
	// Collection configures the kernel part (pin paths, verifier logs).
	Collection ebpf.CollectionOptions
	// InProcess runs everything in the Go process: no kernel programs are
	// loaded and every map is a user-space map. For tests and unprivileged
	// users; kernel programs' Attach and Run fail with ErrInProcess.
	InProcess bool
	// Output receives the text of bpf_printk, skelgen_printf and the
	// histogram built-ins; nil means os.Stdout. Its Write is called in
	// the middle of a run and may use the object's maps or close the
	// object, as a host function may: the run's maps are unlocked.
	Output io.Writer
	// Records receives skelgen_emit records; nil discards them. It is
	// called in the middle of a run, with the run's maps unlocked, as
	// Output is.
	Records func(name string, value int64)
	// Budget bounds the instructions of one user program run; 0 means
	// runtime.DefaultBudget.
	Budget uint64
	// MapMemory bounds the memory of the object's user-space maps, in
	// bytes; 0 means runtime.DefaultMapMemory (1 GiB). A map it cannot
	// hold fails the load; see runtime.MapMemory.
	MapMemory uint64
	// Programs, when not nil, names the user-space programs to load; the
	// others are left out (with the host functions only they call).
	Programs []string
	// Disabled names programs, kernel or user-space, not to load (their
	// autoload is off): a kernel program's Attach and Run then fail with
	// ErrDisabled, and the skeleton leaves a user program's field nil.
	Disabled []string
	// Manual names kernel programs AttachAll leaves out (their autoattach
	// is off); their Attach methods still attach them.
	Manual []string
	// Host implements the host functions (extern __ksym) the user-space
	// programs call; generated skeletons bind it. Load fails naming the
	// function when a program that calls one is loaded without it.
	Host H
	// KernelBTF is a kernel BTF file (raw BTF or a vmlinux ELF) to
	// relocate the kernel programs' CO-RE accesses against instead of the
	// running kernel's BTF (like Collection.Programs.KernelTypes).
	KernelBTF string
	// Kernel is the release (as uname -r prints it) of a kernel whose
	// minimal BTF the skeleton carries (skelgen -btf-for): the kernel
	// programs are relocated against it, whatever kernel runs. Without
	// it, KernelBTF or KernelTypes, a skeleton that carries kernel BTF
	// uses the running kernel's own BTF where it has one, else the
	// carried BTF of its release.
	Kernel string

	// embedded reads the skeleton's minimal kernel BTF (WithKernelBTF)
	// for a release (embeddedSpec): a function, so that only a module
	// whose skeletons carry kernel BTF keeps the reading.
	embedded func(release, what string, running bool) (*btf.Spec, error)
}

// LoadOptions are the options of Load when the caller binds host functions
// itself (the externs argument of Load).
type LoadOptions = Options[NoHost]

// NoHost is the Host of an object whose user-space programs call no host
// functions.
type NoHost struct{}

// withoutHost is o without its Host, which Load does not use: generated
// skeletons turn it into the externs argument. It is not inlined into
// Load, which every skeleton with user programs instantiates.
//
//go:noinline
func withoutHost[H any](o *Options[H]) *LoadOptions {
	if o == nil {
		return &LoadOptions{}
	}
	return &LoadOptions{Collection: o.Collection, InProcess: o.InProcess, Output: o.Output, Records: o.Records,
		Budget: o.Budget, MapMemory: o.MapMemory, Programs: o.Programs, Disabled: o.Disabled, Manual: o.Manual,
		KernelBTF: o.KernelBTF, Kernel: o.Kernel, embedded: o.embedded}
}

// Set is a loaded object: the kernel collection (nil in process) and the
// user-space half, with the links its programs' Attach methods made.
type Set struct {
	// Spec is the whole object, user-space programs included.
	Spec *ebpf.CollectionSpec
	// Coll is the kernel part; nil when the object runs in process.
	Coll *ebpf.Collection
	// User holds the user-space programs and the maps only they use.
	User *UserSet
	// Links are closed by Close.
	Links Links

	// life orders Close after the runs and typed calls in progress, so
	// that Close never unmaps memory a run uses (lifetime.go).
	life     lifetime
	readers  readers
	disabled map[string]bool
	// manual are the programs whose autoattach is off; usdtNext is the
	// next free index of the USDT specs map (usdt_attach.go).
	autoMu sync.Mutex
	manual map[string]bool
	//lint:ignore U1000 used by usdt_attach.go, which Windows does not build
	usdtNext uint32
	// autoProgs and autoMaps are the program handles and struct_ops maps
	// that Bind set, in field order (AttachAll, NewTool).
	autoProgs, autoMaps []autoattacher
	// tool is the Tool serving the object, nil when none is.
	tool toolPointer
}

// toolPointer is atomic.Pointer[Tool] without the instantiation, whose
// methods every package that names Set would compile again.
type toolPointer struct{ p unsafe.Pointer }

func (t *toolPointer) Load() *Tool   { return (*Tool)(atomic.LoadPointer(&t.p)) }
func (t *toolPointer) Store(v *Tool) { atomic.StorePointer(&t.p, unsafe.Pointer(v)) }
func (t *toolPointer) CompareAndSwap(old, new *Tool) bool {
	return atomic.CompareAndSwapPointer(&t.p, unsafe.Pointer(old), unsafe.Pointer(new))
}

// LoadKernelOnly is Load for an object without user-space programs: its
// programs and the maps they use go into the kernel, or in process its
// maps alone into the runtime's maps. It uses nothing of the runtime's VM,
// so a module whose objects are all of this kind carries no VM. An object
// with user-space programs makes it fail: those need Load. progs are the
// skeleton's program specs: those switched off (SetAutoload) are left
// out, and those whose autoattach is off stay out of AttachAll.
//
// It is not generic, as Load is, so that no skeleton package compiles an
// instantiation of it: a kernel-only object's options have no host.
func LoadKernelOnly(spec *ebpf.CollectionSpec, opts *Options[NoHost], progs ...*ProgramSpec) (*Set, error) {
	return load(spec, withDisabled(*withoutHost(opts), progs), nil)
}

// load is Load and LoadKernelOnly; vm is nil for LoadKernelOnly.
func load(spec *ebpf.CollectionSpec, o LoadOptions, vm *userParts) (*Set, error) {
	if o.Output == nil {
		o.Output = os.Stdout
	}
	s := &Set{Spec: spec}
	var k *ebpf.CollectionSpec
	if !o.InProcess {
		k = KernelSpec(spec)
	}
	if err := s.applyDisabled(k, &o); err != nil {
		return nil, err
	}
	sized := k
	if o.InProcess {
		sized = spec
	}
	if err := checkSized(sized); err != nil {
		return nil, err
	}
	if !o.InProcess {
		kc, err := kconfigOf(spec)
		if err != nil {
			return nil, err
		}
		if kc != nil {
			if err := kc.resolve(k); err != nil {
				return nil, err
			}
			kc.normalize(spec) // for specs ParseObject did not read
		}
		kt, err := kernelTypes(k, &o)
		if err != nil {
			return nil, err
		}
		o.Collection.Programs.KernelTypes = kt
		coll, err := NewCollection(k, &o.Collection)
		if err != nil {
			return nil, err
		}
		s.Coll = coll
	}
	user, names, err := loadMaps(s, &o, vm)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.User = user
	if len(names) > 0 {
		if err := vm.programs(s, names, &o); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close detaches every link and releases the kernel and user-space parts,
// closing the ring buffer and perf readers opened from the object too (a
// blocked Read returns ErrClosed). Runs, typed map calls and variables
// started after it fail with ErrClosed, without waiting. Close waits for
// the runs and calls in progress, except those inside a host function: a
// host function may call Close (or Run) itself, so Close cannot wait for
// it; such a run fails with ErrClosed when its host function returns, and
// the release happens when it ends. Close may be called more than once; it
// returns the error of detaching links.
func (s *Set) Close() error {
	err := s.Links.Close()
	s.life.close(s.release)
	return err
}

// release frees what the object holds once no run or typed call uses it.
func (s *Set) release() {
	s.readers.close()
	if s.User != nil {
		s.User.close()
	}
	if s.Coll != nil {
		s.Coll.Close()
	}
}

// references returns the names of the maps (data sections included) that
// the program's instructions refer to.
func references(p *ebpf.ProgramSpec, maps map[string]*ebpf.MapSpec) map[string]bool {
	refs := map[string]bool{}
	for _, ins := range p.Instructions {
		if ref := ins.Reference(); ref != "" && ins.IsLoadFromMap() {
			if _, ok := maps[ref]; ok {
				refs[ref] = true
			}
		}
	}
	return refs
}

// KernelSpec returns the part of spec that goes into the kernel: without the
// user-space programs, and without the maps and data sections only they use
// (cilium/ebpf would create those even though no kernel program needs
// them). spec itself is not changed.
func KernelSpec(spec *ebpf.CollectionSpec) *ebpf.CollectionSpec {
	k := spec.Copy()
	kernelRefs := map[string]bool{}
	userRefs := map[string]bool{}
	for name, p := range k.Programs {
		refs := references(p, k.Maps)
		target := kernelRefs
		if IsUserProgram(p) {
			target = userRefs
			delete(k.Programs, name)
		}
		for r := range refs {
			target[r] = true
		}
	}
	for name := range userRefs {
		if kernelRefs[name] {
			continue
		}
		delete(k.Maps, name)
		for vname, v := range k.Variables {
			if v.SectionName == name {
				delete(k.Variables, vname)
			}
		}
	}
	return k
}

// NewCollection loads spec into the kernel like ebpf.NewCollectionWithOptions
// and explains failures whose errno alone says little.
func NewCollection(spec *ebpf.CollectionSpec, opts *ebpf.CollectionOptions) (*ebpf.Collection, error) {
	var o ebpf.CollectionOptions
	if opts != nil {
		o = *opts
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, o)
	if err != nil {
		return nil, explainLoad(spec, err)
	}
	return coll, nil
}

// explainLoad names what the kernel refused: the capabilities the process
// lacks, trampolines, or a path for pinned maps.
func explainLoad(spec *ebpf.CollectionSpec, err error) error {
	if perr := explainPrivilege(err, "loading BPF maps and programs", loadCapabilities(spec)...); perr != err {
		return perr
	}
	var names []string
	for name, p := range spec.Programs {
		if p.Type == ebpf.Tracing && (p.AttachType == ebpf.AttachTraceFEntry || p.AttachType == ebpf.AttachTraceFExit || p.AttachType == ebpf.AttachModifyReturn) {
			if strings.Contains(err.Error(), name) {
				names = append(names, name)
			}
		}
	}
	if len(names) > 0 && (errors.Is(err, os.ErrPermission) || errors.Is(err, ebpf.ErrNotSupported)) {
		return fmt.Errorf("%w (the kernel refused to load fentry/fexit program %s: this kernel does not allow BPF trampolines)", err, strings.Join(names, ", "))
	}
	if _, statErr := os.Stat(runningKernelBTF); errors.Is(err, ebpf.ErrNotSupported) && statErr != nil {
		for name, p := range spec.Programs {
			if btfAttached(p) && strings.Contains(err.Error(), name) {
				return fmt.Errorf("%w (program %s (%s) attaches by the running kernel's own BTF IDs, and this kernel has no BTF (%s): no kernel BTF a skeleton carries with -btf-for can stand in for it; it needs a kernel built with CONFIG_DEBUG_INFO_BTF)", err, name, p.SectionName, runningKernelBTF)
			}
		}
	}
	for _, m := range spec.Maps {
		if m.Pinning == ebpf.PinByName && strings.Contains(err.Error(), "pin") {
			return fmt.Errorf("%w (map %s is pinned by name: set CollectionOptions.Maps.PinPath to a directory in a mounted bpffs)", err, m.Name)
		}
	}
	return err
}

// btfAttached reports whether the kernel attaches p by a BTF ID of its
// own: iterators, tp_btf, fentry, fexit, fmod_ret, LSM and struct_ops
// programs.
func btfAttached(p *ebpf.ProgramSpec) bool {
	switch p.Type {
	case ebpf.Tracing, ebpf.LSM, ebpf.StructOps:
		return true
	}
	return false
}

// FindUserProgram returns the name of the user-space program of spec whose
// section is section ("ubpf/x") or whose function is named section.
func FindUserProgram(spec *ebpf.CollectionSpec, section string) (string, error) {
	var names []string
	for name, p := range spec.Programs {
		if !IsUserProgram(p) {
			continue
		}
		if p.SectionName == section || name == section {
			return name, nil
		}
		names = append(names, p.SectionName)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", fmt.Errorf("no user-space programs (SEC(\"ubpf/...\")) in the object")
	}
	return "", fmt.Errorf("no user-space program %q; the object has %s", section, strings.Join(names, ", "))
}
