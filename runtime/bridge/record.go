package bridge

import "unsafe"

// Record is one record of a typed ring buffer or perf reader: the record
// decoded as E, and all its bytes.
//
// Records need not be exactly E's size. Exec tracers, for one, send a
// fixed header and then only as many bytes of arguments as there are:
//
//	struct event { __u32 pid; __u32 args_size; char args[ARGS_MAX]; };
//	bpf_ringbuf_output(&events, e, offsetof(struct event, args) + e->args_size, 0);
//
// A record shorter than E decodes into Value with the rest of E zero, and
// Len says how many bytes were real (Value.Args[:Value.ArgsSize] is then
// the payload). A record longer than E (a header struct followed by a
// payload the struct does not describe, or perf's padding) decodes E from
// its first bytes; Tail returns the rest.
type Record[E any] struct {
	// Value is the record decoded; fields past Len are zero.
	Value E
	// Len is the record's length in bytes.
	Len int
	// Raw is every byte of the record. It is valid until the reader's next
	// Read or ReadRecord: copy it to keep it.
	Raw []byte
	// Lost, for perf readers, is the number of samples the kernel lost on
	// CPU; the record then carries no data.
	Lost uint64
	// CPU is the CPU a perf sample came from (0 for ring buffers).
	CPU int
}

// Short reports whether the record was shorter than E, so that part of
// Value is zero-filled rather than sent.
func (r Record[E]) Short() bool { return r.Len < sizeOf[E]() }

// Tail returns the bytes of the record past E (nil if there are none).
func (r Record[E]) Tail() []byte {
	if n := sizeOf[E](); len(r.Raw) > n {
		return r.Raw[n:]
	}
	return nil
}

// set makes r the record of sample (nil for a notice of lost samples),
// decoded in place.
func (r *Record[E]) set(sample []byte, lost uint64, cpu int) {
	b := bytesOf(&r.Value)
	clear(b[copy(b, sample):])
	r.Len, r.Raw, r.Lost, r.CPU = len(sample), sample, lost, cpu
}

// copyIn makes r a copy of sample, a ring buffer's record in place: Value
// decoded (a record as long as E or longer is copied as an E, which the
// compiler does without a call for a small E), Raw a view of Value when
// the record fits there, else a copy in Raw's array, reused when it has
// room (a view of Value is too short for a record that does not fit).
func (r *Record[E]) copyIn(sample []byte) {
	b := bytesOf(&r.Value)
	switch {
	case len(sample) < len(b):
		clear(b[copy(b, sample):])
		r.Raw = b[:len(sample)]
	case len(sample) == len(b):
		r.Value = *(*E)(unsafe.Pointer(unsafe.SliceData(sample)))
		r.Raw = b
	default:
		r.Value = *(*E)(unsafe.Pointer(unsafe.SliceData(sample)))
		r.Raw = append(r.Raw[:0], sample...)
	}
	r.Len, r.Lost, r.CPU = len(sample), 0, 0
}
