package runtime

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
)

// MapType is a kernel BPF_MAP_TYPE_* number.
type MapType uint32

// The map types NewMap implements.
const (
	Hash          MapType = 1
	Array         MapType = 2
	PerCPUHash    MapType = 5
	PerCPUArray   MapType = 6
	LRUHash       MapType = 9
	LRUPerCPUHash MapType = 10
	RingBuf       MapType = 27
)

// Map flags and update flags, as the kernel numbers them.
const (
	FlagNoPrealloc = 1 << 0 // BPF_F_NO_PREALLOC: a hash map allocates as it grows
	FlagRdonlyProg = 1 << 7 // BPF_F_RDONLY_PROG: the program may not write values

	UpdateAny     = 0 // BPF_ANY
	UpdateNoExist = 1 // BPF_NOEXIST
	UpdateExist   = 2 // BPF_EXIST
	UpdateLock    = 4 // BPF_F_LOCK: no value of the runtime's maps has a spin lock, so it is -EINVAL
)

// MapSpec describes a map as the object declares it.
type MapSpec struct {
	Name       string
	Type       MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
}

// ReadOnly reports whether programs may only read the map's values:
// BPF_F_RDONLY_PROG maps and the .rodata sections (".rodata" and
// ".rodata.*", which libbpf and cilium/ebpf freeze after load). Lookups of
// such maps give read-only regions, and the update and delete helpers fail
// with -EPERM, as the kernel refuses them.
func (s MapSpec) ReadOnly() bool {
	return s.Flags&FlagRdonlyProg != 0 || s.Name == ".rodata" || strings.HasPrefix(s.Name, ".rodata.")
}

// Map is what programs reach through the map helpers. User-space maps come
// from NewMap; other packages may back a Map by a kernel map.
//
// The methods are not synchronised: a user-space map is a SharedMap, and
// whoever calls them holds its lock (see SharedMap).
type Map interface {
	Spec() MapSpec
	// Lookup returns value memory the program reads and writes: live for
	// user-space maps, a private copy for kernel-backed ones. A missing key
	// is ErrKeyNotExist.
	Lookup(key []byte) ([]byte, error)
	// Update stores a copy of value; flags is UpdateAny, UpdateNoExist or
	// UpdateExist.
	Update(key, value []byte, flags uint64) error
	Delete(key []byte) error
	// NextKey writes the key after key into next; a nil or missing key
	// gives the first key, the last key ErrKeyNotExist.
	NextKey(key, next []byte) error
}

// SharedMap is a user-space map that runs of programs and Go code share.
// A run holds the lock of every SharedMap its program uses from its start
// to its end, except while the program calls a host function (an extern
// bound through Options.Externs) and while a helper calls the host's code
// (Machine.Unlocked: trace_printk's Options.Output), so that the host's
// code may use the maps too. Go code holds the lock around each access.
// Runs of programs that share a map therefore take turns, and Go calls
// wait for the run in progress; runs that share no user-space map run in
// parallel.
//
// Because a run holds the lock, the value memory a program looked up stays
// its own for the whole run (except across calls of the host's code, where
// another run or Go call may write it, as another CPU may in the kernel),
// and map values are never freed while the map lives, so a stale pointer
// reads valid memory.
type SharedMap interface {
	Map
	sync.Locker
	shared() *sync.Mutex
}

// sharedMap is the lock of a user-space map.
type sharedMap struct{ mu sync.Mutex }

func (s *sharedMap) Lock()               { s.mu.Lock() }
func (s *sharedMap) Unlock()             { s.mu.Unlock() }
func (s *sharedMap) shared() *sync.Mutex { return &s.mu }

// NewMap creates a user-space map with a MapMemory of its own at the
// default limit. Per-CPU maps have one CPU: their values are ValueSize
// bytes.
func NewMap(spec MapSpec) (Map, error) { return NewMapIn(spec, NewMapMemory(0)) }

// NewMapIn creates a user-space map whose memory counts against mem, which
// the maps of one object share. Sizes the kernel refuses are refused here
// too (see checkSizes). Arrays and ring buffers take their whole size from
// mem at once, hash maps their largest size unless they are
// BPF_F_NO_PREALLOC (see MapMemory): a map mem cannot hold is an error
// wrapping ErrNoMemory.
func NewMapIn(spec MapSpec, mem *MapMemory) (Map, error) {
	if err := checkSizes(spec); err != nil {
		return nil, err
	}
	switch spec.Type {
	case Hash, PerCPUHash, LRUHash, LRUPerCPUHash:
		return newHashMap(spec, mem)
	case Array, PerCPUArray:
		stride := (uint64(spec.ValueSize) + 7) &^ 7
		size := stride * uint64(spec.MaxEntries)
		if err := mem.take(spec, size); err != nil {
			return nil, err
		}
		return &arrayMap{spec: spec, stride: int(stride), data: make([]byte, size)}, nil
	case RingBuf:
		return newRingBuffer(spec, mem)
	}
	return nil, fmt.Errorf("map %q: type %d: %w", spec.Name, spec.Type, ErrNotSupported)
}

// The kernel's size limits for the map types NewMap implements (Linux 6.x,
// 4 KiB pages; creating maps on a 6.18 kernel gives the same bounds):
//   - hash maps: key_size + value_size < KMALLOC_MAX_SIZE - sizeof(struct
//     htab_elem), that is 4 MiB - 48 (htab_map_alloc_check in
//     kernel/bpf/hashtab.c; KMALLOC_MAX_SIZE is 1 << (MAX_PAGE_ORDER +
//     PAGE_SHIFT), and hash keys are no longer bound by MAX_BPF_STACK);
//   - per-CPU hash and array values: round_up(value_size, 8) <=
//     PCPU_MIN_UNIT_SIZE, 32 KiB (hashtab.c, arraymap.c);
//   - array values: value_size <= INT_MAX (array_map_alloc_check in
//     kernel/bpf/arraymap.c).
const (
	maxHashEntrySize = 4<<20 - 48
	maxPerCPUValue   = 32 << 10
	maxArrayValue    = 1<<31 - 1
)

// checkSizes refuses the sizes the kernel refuses, naming the map.
func checkSizes(spec MapSpec) error {
	vs8 := (uint64(spec.ValueSize) + 7) &^ 7
	switch spec.Type {
	case Hash, PerCPUHash, LRUHash, LRUPerCPUHash:
		if spec.KeySize == 0 || spec.ValueSize == 0 || spec.MaxEntries == 0 {
			return fmt.Errorf("map %q: key size, value size and max entries must be nonzero", spec.Name)
		}
		if uint64(spec.KeySize)+uint64(spec.ValueSize) >= maxHashEntrySize {
			return fmt.Errorf("map %q: key size %d plus value size %d is too large: the kernel's hash maps take less than %d bytes", spec.Name, spec.KeySize, spec.ValueSize, maxHashEntrySize)
		}
		if (spec.Type == PerCPUHash || spec.Type == LRUPerCPUHash) && vs8 > maxPerCPUValue {
			return fmt.Errorf("map %q: value size %d is too large: the kernel's per-CPU values take at most %d bytes", spec.Name, spec.ValueSize, maxPerCPUValue)
		}
	case Array, PerCPUArray:
		if spec.KeySize != 4 || spec.ValueSize == 0 || spec.MaxEntries == 0 {
			return fmt.Errorf("map %q: array needs 4-byte keys and nonzero value size and max entries", spec.Name)
		}
		if spec.ValueSize > maxArrayValue {
			return fmt.Errorf("map %q: value size %d is too large: the kernel's arrays take at most %d bytes", spec.Name, spec.ValueSize, maxArrayValue)
		}
		if spec.Type == PerCPUArray && vs8 > maxPerCPUValue {
			return fmt.Errorf("map %q: value size %d is too large: the kernel's per-CPU values take at most %d bytes", spec.Name, spec.ValueSize, maxPerCPUValue)
		}
	}
	return nil
}

// DefaultMapMemory is the limit of a MapMemory made with limit 0: 1 GiB,
// the most one user-space array or ring buffer could take before limits
// were per object. It holds a million entries of a few hundred bytes in
// hash maps (the largest maps of the usual tracing tools are 10,240 to a
// million small entries), while a program that fills its maps cannot take
// more than a fraction of a common machine's memory.
const DefaultMapMemory = 1 << 30

// MapMemory bounds the memory of the user-space maps made with NewMapIn
// against it, those of one loaded object. Arrays and ring buffers take
// their whole size when made, as they allocate it; hash maps take the
// most they can grow to (MaxEntries slots, keys, values and the table of
// twice as many entries), as the kernel preallocates a hash map, except
// BPF_F_NO_PREALLOC hash maps, which take memory as they grow and whose
// updates fail with ErrNoMemory (-ENOMEM) once the limit is reached. What
// a map takes is not returned while the map lives.
type MapMemory struct {
	mu    sync.Mutex
	limit uint64
	used  uint64
}

// NewMapMemory returns a MapMemory of limit bytes; 0 means
// DefaultMapMemory.
func NewMapMemory(limit uint64) *MapMemory {
	if limit == 0 {
		limit = DefaultMapMemory
	}
	return &MapMemory{limit: limit}
}

// Used returns the bytes the maps have taken.
func (q *MapMemory) Used() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.used
}

// Limit returns the limit in bytes.
func (q *MapMemory) Limit() uint64 { return q.limit }

// take takes n bytes for the map of spec, or fails naming it.
func (q *MapMemory) take(spec MapSpec, n uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n > q.limit-q.used {
		return fmt.Errorf("map %q: %d more bytes would pass the limit of %d bytes for user-space maps (%d taken): %w", spec.Name, n, q.limit, q.used, ErrNoMemory)
	}
	q.used += n
	return nil
}

func regionName(spec MapSpec) string {
	if len(spec.Name) > 0 && spec.Name[0] == '.' {
		return spec.Name
	}
	return "map " + spec.Name + " value"
}

// checkFlags refuses update flags the kernel does not know (BPF_F_LOCK
// aside, which the maps refuse at their own place in the kernel's order
// of checks).
func checkFlags(flags uint64) error {
	if flags&^UpdateLock > UpdateExist {
		return fmt.Errorf("update flags %#x: %w", flags, ErrInvalidArg)
	}
	return nil
}

var errLock = fmt.Errorf("BPF_F_LOCK on a value without a spin lock: %w", ErrInvalidArg)

// arrayMap is an array or (one-CPU) per-CPU array. Elements always exist.
// They lie stride bytes apart, the value size rounded up to 8 as in the
// kernel, so that every value is aligned for atomics.
type arrayMap struct {
	sharedMap
	spec   MapSpec
	stride int
	data   []byte
}

func (a *arrayMap) Spec() MapSpec { return a.spec }

func (a *arrayMap) index(key []byte) (int, bool) {
	if len(key) != 4 {
		return 0, false
	}
	i := binary.LittleEndian.Uint32(key)
	return int(i), i < a.spec.MaxEntries
}

func (a *arrayMap) Lookup(key []byte) ([]byte, error) {
	i, ok := a.index(key)
	if !ok {
		return nil, ErrKeyNotExist
	}
	at, vs := i*a.stride, int(a.spec.ValueSize)
	return a.data[at : at+vs : at+vs], nil
}

func (a *arrayMap) Update(key, value []byte, flags uint64) error {
	if err := checkFlags(flags); err != nil {
		return err
	}
	if a.spec.Type == PerCPUArray && flags&UpdateLock != 0 {
		return errLock // a per-CPU array refuses it first
	}
	// The kernel's order: the index, then BPF_NOEXIST, then BPF_F_LOCK.
	i, ok := a.index(key)
	if !ok {
		return errArrayRange
	}
	if flags&UpdateNoExist != 0 {
		return ErrKeyExist
	}
	if flags&UpdateLock != 0 {
		return errLock
	}
	at := i * a.stride
	copy(a.data[at:at+int(a.spec.ValueSize)], value)
	return nil
}

func (a *arrayMap) Delete(key []byte) error { return errArrayDelete }

// The errors of an update past an array's end and of a delete from an
// array, made once: map_update_elem and map_delete_elem turn them into
// -E2BIG and -EINVAL, as the kernel returns, without allocating.
var (
	errArrayRange  = fmt.Errorf("index out of range: %w", ErrMapFull)
	errArrayDelete = fmt.Errorf("delete from array: %w", ErrInvalidArg)
)

func (a *arrayMap) NextKey(key, next []byte) error {
	n := uint32(0)
	if i, ok := a.index(key); ok && key != nil {
		n = uint32(i) + 1
	}
	if n >= a.spec.MaxEntries {
		return ErrKeyNotExist
	}
	binary.LittleEndian.PutUint32(next, n)
	return nil
}

// RingBuffer is a user-space BPF_MAP_TYPE_RINGBUF: programs write records
// with bpf_ringbuf_output or reserve/submit, Go code reads them with Read.
// MaxEntries is the capacity in bytes; each record also takes an 8-byte
// header and is padded to 8 bytes, as in the kernel, and as there a
// record fits when the records not yet read past and it take at most
// MaxEntries-1 bytes. Records are read in the order they were reserved:
// a record reserved and not yet submitted holds back the ones reserved
// after it, and a discarded one keeps its space until the reader passes
// it.
type RingBuffer struct {
	spec    MapSpec
	mu      sync.Mutex
	used    int
	records []ringRecord // in reserve order, from the oldest not read past
	first   uint64       // the number of records[0], counting every record reserved
}

// ringRecord is a record of a RingBuffer and its state.
type ringRecord struct {
	data  []byte
	state uint8
}

// The states of a ringRecord.
const (
	recordBusy      = iota // reserved, neither submitted nor discarded
	recordSubmitted        // to be read
	recordDiscarded        // to be skipped
)

func newRingBuffer(spec MapSpec, mem *MapMemory) (*RingBuffer, error) {
	n := spec.MaxEntries
	if n == 0 || n&(n-1) != 0 || spec.KeySize != 0 || spec.ValueSize != 0 {
		return nil, fmt.Errorf("ring buffer %q: max entries must be a power of two and key and value sizes 0", spec.Name)
	}
	if err := mem.take(spec, uint64(n)); err != nil {
		return nil, err
	}
	return &RingBuffer{spec: spec}, nil
}

func (rb *RingBuffer) Spec() MapSpec                      { return rb.spec }
func (rb *RingBuffer) Lookup([]byte) ([]byte, error)      { return nil, ErrNotSupported }
func (rb *RingBuffer) Update(_, _ []byte, _ uint64) error { return ErrNotSupported }
func (rb *RingBuffer) Delete([]byte) error                { return ErrNotSupported }
func (rb *RingBuffer) NextKey(_, _ []byte) error          { return ErrNotSupported }

func recordCost(n int) int { return 8 + (n+7)&^7 }

// reserve takes space for a record of n bytes, which may be 0, and
// returns it and its number for finish; ok is false when the ring has no
// room.
func (rb *RingBuffer) reserve(n int) (rec []byte, num uint64, ok bool) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if n < 0 || n >= int(rb.spec.MaxEntries) || rb.used+recordCost(n) > int(rb.spec.MaxEntries)-1 {
		return nil, 0, false
	}
	rb.used += recordCost(n)
	// The data is aligned for atomics, as in the kernel.
	rec = make([]byte, n, (n+7)&^7)
	rb.records = append(rb.records, ringRecord{data: rec})
	return rec, rb.first + uint64(len(rb.records)-1), true
}

// finish submits or discards record num.
func (rb *RingBuffer) finish(num uint64, discard bool) {
	rb.mu.Lock()
	r := &rb.records[num-rb.first]
	r.state = recordSubmitted
	if discard {
		r.state = recordDiscarded
	}
	rb.mu.Unlock()
}

// Write appends a copy of rec as a submitted record, as a program's
// bpf_ringbuf_output does; it reports false, writing nothing, when the
// buffer has no room. Go code uses it to feed records to the buffer's
// readers, in tests say.
func (rb *RingBuffer) Write(rec []byte) bool {
	b, num, ok := rb.reserve(len(rec))
	if !ok {
		return false
	}
	copy(b, rec)
	rb.finish(num, false)
	return true
}

// Read removes and returns the oldest submitted record, skipping the
// discarded ones before it; ok is false when there is none or when the
// oldest record is reserved and not yet submitted.
func (rb *RingBuffer) Read() (rec []byte, ok bool) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	for len(rb.records) > 0 && rb.records[0].state != recordBusy {
		r := rb.records[0]
		rb.records[0] = ringRecord{}
		rb.records = rb.records[1:]
		rb.first++
		rb.used -= recordCost(len(r.data))
		if r.state == recordSubmitted {
			return r.data, true
		}
	}
	return nil, false
}

// Len returns the number of submitted records waiting to be read.
func (rb *RingBuffer) Len() int {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	n := 0
	for _, r := range rb.records {
		if r.state == recordSubmitted {
			n++
		}
	}
	return n
}
