package runtime

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ProgramSpec is everything Load needs to validate and run one program.
//
// References in Instructions are already resolved by the caller:
//
//	lddw src=PseudoMapIdx (or PseudoMapFD), imm=i       -> handle of Maps[i]
//	lddw src=PseudoMapIdxValue (or PseudoMapValue), imm=i, next imm=off
//	                                                    -> address of Maps[i]'s value at key 0, plus off
//	lddw src=PseudoFunc, imm=rel                        -> address of the function at the next slot + rel
//	call src=PseudoCall, imm=rel                        -> bpf-to-bpf call to the next slot + rel
//	call src=PseudoKfuncCall, imm=i                     -> Externs[i], bound by name through Options.Externs
//	call src=0, imm=id                                  -> helper id from Options.Helpers
type ProgramSpec struct {
	Name         string
	Instructions []Instruction
	Maps         []Map
	Externs      []string
	// Symbols optionally names functions by the index of their first
	// instruction, for error messages.
	Symbols map[int]string
}

// Options configure Load; the zero value is useful.
type Options struct {
	// Helpers resolves helper calls by id; nil means Builtins().
	Helpers *HelperSet
	// Externs binds ProgramSpec.Externs by name. An unbound extern is a
	// load error.
	Externs map[string]Func
	// Budget bounds the instruction slots one run may execute; 0 means
	// DefaultBudget. It is charged where control transfers (taken jumps,
	// calls, exits) with the straight-line run just finished, so the count
	// is exact while the check costs nothing on other instructions. A run
	// that would execute more fails with ErrBudget at the end of the
	// straight-line run that crossed the limit.
	Budget uint64
	// Output receives bpf_trace_printk text; nil discards it. Its Write
	// runs with the program's maps unlocked, as a host function does.
	Output io.Writer

	noFusion bool // tests compare runs with and without fused instructions
}

// DefaultBudget is the budget of a run when Options.Budget is 0.
const DefaultBudget = 1 << 24

// Program is a validated program with its run state. A Program runs one
// call at a time; use Clone for another goroutine.
type Program struct {
	name       string
	insns      []insn
	funcs      []Func
	funcNames  []string
	maps       []Map
	valueNames []string     // region names of map values, by map index
	keySizes   []uint32     // by map index, so helpers need not copy a MapSpec
	hash       []*hashMap   // by map index: the map if it is a hash map, for map_lookup_elem's fast path
	lookupFn   int64        // index in funcs of the built-in map_lookup_elem, or -1
	direct     []directSite // by instruction: the map calls the interpreter runs directly (nil: none)
	helpers    *HelperSet
	budget     int64
	out        io.Writer
	symbols    map[int]string
	static     Memory        // the regions every run starts with (context and stack slots filled per run)
	readOnly   []bool        // by map index: MapSpec.ReadOnly
	entry      []bool        // by instruction: a function starts here
	stackLow   int           // the lowest frame offset a run can write (see stackLow)
	calls      bool          // the program calls helpers or externs (or callx)
	locks      []*sync.Mutex // of the SharedMaps the program uses, in address order
	closed     *atomic.Bool  // shared with clones: see Close
	m          *Machine
	// updateBuiltin and deleteBuiltin say whether the program's calls of
	// helpers 2 and 3 are the built-in map_update_elem and map_delete_elem.
	updateBuiltin, deleteBuiltin bool
}

// Name returns the program's name.
func (p *Program) Name() string { return p.name }

// Maps returns the maps the program uses, in ProgramSpec order.
func (p *Program) Maps() []Map { return p.maps }

// Load validates spec and prepares it to run. Errors name the instruction.
func Load(spec *ProgramSpec, opts *Options) (*Program, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &Program{
		name:     spec.Name,
		maps:     spec.Maps,
		helpers:  opts.Helpers,
		out:      opts.Output,
		symbols:  spec.Symbols,
		budget:   int64(opts.Budget),
		closed:   new(atomic.Bool),
		lookupFn: -1,
	}
	if p.helpers == nil {
		p.helpers = Builtins()
	}
	if p.out == nil {
		p.out = io.Discard
	}
	if opts.Budget == 0 || opts.Budget > 1<<62 {
		p.budget = DefaultBudget
	}
	p.static.rd = make([][]byte, firstStaticRegion)
	p.static.wr = make([][]byte, firstStaticRegion)
	p.static.names = make([]string, firstStaticRegion)
	p.static.own = make([][]byte, firstStaticRegion)
	p.static.names[0] = "NULL"
	p.static.names[regionContext] = "context"
	for f := range MaxFrames {
		p.static.names[regionStack+f] = fmt.Sprintf("stack frame %d", f)
	}
	v := validator{p: p, spec: spec, opts: opts, valueRegion: map[int]uint32{}, funcIndex: map[string]int{}}
	if err := v.run(); err != nil {
		return nil, err
	}
	p.static.nstatic = len(p.static.rd)
	for _, m := range p.maps {
		var spec MapSpec
		if m != nil {
			spec = m.Spec()
		}
		p.valueNames = append(p.valueNames, regionName(spec))
		p.keySizes = append(p.keySizes, spec.KeySize)
		p.readOnly = append(p.readOnly, spec.ReadOnly())
		h, _ := m.(*hashMap)
		p.hash = append(p.hash, h)
		if s, ok := m.(SharedMap); ok && !slices.Contains(p.locks, s.shared()) {
			p.locks = append(p.locks, s.shared())
		}
	}
	// One order for every program, so runs that share maps cannot
	// deadlock: Go never moves heap objects.
	slices.SortFunc(p.locks, func(a, b *sync.Mutex) int {
		return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
	})
	p.m = newMachine(p)
	return p, nil
}

// Clone returns a Program sharing the code and maps of p with its own run
// state, for running concurrently with p. Runs that share user-space maps
// take turns (see SharedMap).
func (p *Program) Clone() *Program {
	q := *p
	q.m = newMachine(&q)
	return &q
}

// SetTag gives p's own run state a value that Machine.Tag returns to the
// helpers, externs and host functions its runs call, and reports whether
// it did: a run state's tag is set once, by its owner (a skeleton sets
// the tags of the programs it runs, Raw's included), and later calls
// change nothing. Clones do not inherit it: each run state has its own.
// Set it while no run is in progress.
func (p *Program) SetTag(v any) bool {
	if p.m.tag != nil {
		return false
	}
	p.m.tag = v
	return true
}

// SetAbort gives p's own run state a function that a run of it calls
// when it ends without returning to its caller: by a panic that goes on
// (a host function's or a helper's, not a fault of the program) or by
// runtime.Goexit. The run has ended when abort is called (its maps'
// locks released), so an owner that hands the run state out can take it
// back there, where a deferred call would otherwise have to. Like the
// tag, it is set once (SetAbort reports whether it set it), clones do not
// inherit it, and it must be set while no run is in progress.
func (p *Program) SetAbort(abort func()) bool {
	if p.m.abort != nil {
		return false
	}
	p.m.abort = abort
	return true
}

// aborted calls the run state's abort function, if it has one.
func (m *Machine) aborted() {
	if m.abort != nil {
		m.abort()
	}
}

// Close ends p's use of the memory its maps gave it (a kernel map's
// mmapped values, say): later runs of p and its clones fail with
// ErrClosed, so its owner may then release that memory. Close waits for
// no run; call it when none is in progress.
func (p *Program) Close() { p.closed.Store(true) }
