package bridge

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
)

// ringMem reads a kernel ring buffer in place: its consumer page mapped
// for writing, its producer page and data (mapped twice in a row by the
// kernel, so that a record that wraps reads as one slice) for reading.
// The producer position is loaded once per batch of records (those
// reserved when it is loaded), not once per record, and the consumer
// position the kernel sees is stored once per few kilobytes of records
// and before every wait: the producer then finds the space of a batch
// freed at once. Waits go through Go's poller on a non-blocking
// duplicate of the map's descriptor, so a waiting reader holds no
// thread, and deadlines and Close wake it.
//
// A read holds seat while it uses the mapping and the positions: a
// compare-and-swap takes it and, on x86, a plain store gives it back
// (seatCount.free), where a mutex costs two locked instructions. A read
// never blocks holding it, nor waits for a record: it gives the seat
// back first, so that a read on another goroutine spins on it only as
// long as a record's copy takes (or, for Serve's consume, its function).
// Close marks the reader closing, closes the file (which wakes a waiting
// read, and returns once no wait looks at the ring any more), then waits
// for the seat to be free before it unmaps. A read takes the seat, then
// looks for closing; Close sets closing, then looks at the seat: one of
// them sees the other, so no read touches the ring once Close has
// unmapped it.
type ringMem struct {
	seat     seatCount
	consPos  *uintptr // in the consumer page
	prodPos  *uintptr // in the producer page
	data     []byte
	mask     uintptr
	pos      uintptr // the consumer position read up to
	prod     uintptr // the producer position last loaded
	stored   uintptr // the consumer position the kernel sees
	every    uintptr // store the position after this many bytes
	cons     []byte  // the consumer page's mapping, for unmap
	prodData []byte  // the producer page's and the data's
	file     *os.File
	conn     syscall.RawConn
	closing  atomic.Bool
}

const (
	ringBusy    = 1 << 31
	ringDiscard = 1 << 30
	ringHdrSize = 8
)

func newRingMem(m *ebpf.Map) (*ringMem, error) {
	size := int(m.MaxEntries())
	page := os.Getpagesize()
	if size <= 0 || size&(size-1) != 0 || size%page != 0 {
		return nil, fmt.Errorf("ring buffer of %d bytes: not a power of two pages", size)
	}
	dup, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(m.FD()), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return nil, fmt.Errorf("ring buffer: %w", errno)
	}
	fd := int(dup)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("ring buffer: %w", err)
	}
	r := &ringMem{file: os.NewFile(uintptr(fd), "ringbuf")}
	var err error
	if r.conn, err = r.file.SyscallConn(); err == nil {
		if r.cons, err = syscall.Mmap(fd, 0, page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED); err == nil {
			r.prodData, err = syscall.Mmap(fd, int64(page), page+2*size, syscall.PROT_READ, syscall.MAP_SHARED)
		}
	}
	if err != nil {
		r.unmap()
		r.file.Close()
		return nil, fmt.Errorf("ring buffer: mmap: %w", err)
	}
	r.init(r.cons, r.prodData[:page], r.prodData[page:])
	return r, nil
}

// init points the reader at the consumer page, the producer page and the
// data (twice its size: the ring mapped twice in a row).
func (r *ringMem) init(cons, prod, data []byte) {
	r.consPos = (*uintptr)(unsafe.Pointer(&cons[0]))
	r.prodPos = (*uintptr)(unsafe.Pointer(&prod[0]))
	r.data = data
	size := len(data) / 2
	r.mask = uintptr(size - 1)
	r.pos = atomic.LoadUintptr(r.consPos)
	r.stored, r.prod = r.pos, r.pos
	r.every = uintptr(min(size/8, 8192))
}

func (r *ringMem) unmap() {
	if r.cons != nil {
		syscall.Munmap(r.cons)
	}
	if r.prodData != nil {
		syscall.Munmap(r.prodData)
	}
	r.cons, r.prodData = nil, nil
}

// next returns the next record, in place, and moves past it: its bytes
// stay valid until the position is stored, which next does (once the
// records read since the last store add up to every) only before reading
// further. ok is false when no committed record is there. The seat is
// held.
func (r *ringMem) next() (rec []byte, ok bool) {
	for {
		if rec, ok := r.inBatch(); ok {
			return rec, true
		}
		switch {
		case r.pos-r.stored >= r.every:
			r.store()
		case r.pos == r.prod:
			if r.prod = atomic.LoadUintptr(r.prodPos); r.pos == r.prod {
				return nil, false
			}
		default: // a record reserved but not committed yet, or discarded
			hdr := r.header(r.pos)
			if hdr&ringBusy != 0 {
				return nil, false
			}
			if hdr&ringDiscard == 0 {
				continue // committed since inBatch looked: read it
			}
			r.pos += (ringHdrSize + uintptr(hdr&^ringDiscard) + 7) &^ 7
		}
	}
}

// inBatch is next's common case, small enough to inline: a committed
// record before the producer position last loaded, with no store of the
// position due.
func (r *ringMem) inBatch() ([]byte, bool) {
	if r.pos == r.prod || r.pos-r.stored >= r.every {
		return nil, false
	}
	hdr := r.header(r.pos)
	if hdr&(ringBusy|ringDiscard) != 0 {
		return nil, false
	}
	off := r.pos&r.mask + ringHdrSize
	r.pos += (ringHdrSize + uintptr(hdr) + 7) &^ 7
	return r.data[off : off+uintptr(hdr)], true
}

// header returns the header of the record at pos. It is an atomic load:
// the record's bytes are read after the kernel's store of a committed
// length.
func (r *ringMem) header(pos uintptr) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[pos&r.mask])))
}

// store makes the read position the one the kernel sees. The seat is
// held.
func (r *ringMem) store() {
	atomic.StoreUintptr(r.consPos, r.pos)
	r.stored = r.pos
}

// enter takes the seat, reporting false, holding nothing, once Close has
// begun.
func (r *ringMem) enter() bool {
	for !r.seat.claim() {
		runtime.Gosched() // a read on another goroutine, which does not block
	}
	if r.closing.Load() {
		r.seat.free()
		return false
	}
	return true
}

// consume passes up to max of the committed records to fn, in place,
// then stores the position once. It returns how many it passed; 0 once
// the reader is closed. fn runs holding the seat.
func (r *ringMem) consume(max int, fn func(raw []byte, lost uint64, cpu int)) int {
	if !r.enter() {
		return 0
	}
	n := 0
	for n < max {
		rec, ok := r.next()
		if !ok {
			break
		}
		fn(rec, 0, 0)
		n++
	}
	r.store()
	r.seat.free()
	return n
}

// take returns the next record, waiting for one, in place and holding
// the seat: the caller copies what it needs, then gives the seat back
// (seat.free).
func (r *ringMem) take() ([]byte, error) {
	if r.seat.claim() {
		if !r.closing.Load() {
			if rec, ok := r.inBatch(); ok {
				return rec, nil
			}
		}
		r.seat.free()
	}
	for r.enter() {
		if rec, ok := r.next(); ok {
			return rec, nil
		}
		if err := r.await(); err != nil {
			return nil, err
		}
	}
	return nil, os.ErrClosed
}

// read returns the next record, waiting for one, as a copy into buf
// (reused when it has room).
func (r *ringMem) read(buf []byte) ([]byte, error) {
	rec, err := r.take()
	if err != nil {
		return nil, err
	}
	buf = append(buf[:0], rec...)
	r.seat.free()
	return buf, nil
}

// wait blocks until a committed record is there, the deadline passes
// (os.ErrDeadlineExceeded) or the reader is closed (os.ErrClosed).
func (r *ringMem) wait() error {
	if !r.enter() {
		return os.ErrClosed
	}
	return r.await()
}

// await stores the position, gives the seat back and waits for a
// committed record at the position: the kernel wakes the reader only
// when a record is committed at the position the reader stored. Without
// the seat, the ring is looked at inside the file's read only, which
// Close waits for when it closes the file.
func (r *ringMem) await() error {
	r.store()
	pos := r.pos
	ok := r.committed(pos)
	r.seat.free()
	if ok { // whether or not the deadline has passed
		return nil
	}
	err := r.conn.Read(func(uintptr) bool {
		ok = r.committed(pos)
		return ok
	})
	if ok {
		return nil
	}
	if r.closing.Load() {
		return os.ErrClosed
	}
	return err
}

// committed reports whether a committed record is at pos.
func (r *ringMem) committed(pos uintptr) bool {
	return atomic.LoadUintptr(r.prodPos) != pos && r.header(pos)&ringBusy == 0
}

// setDeadline makes a wait fail with os.ErrDeadlineExceeded after t.
func (r *ringMem) setDeadline(t time.Time) { r.file.SetReadDeadline(t) }

// Close wakes a waiting reader, waits for a read holding the seat to give
// it back, then unmaps the ring.
func (r *ringMem) Close() error {
	if r.closing.Swap(true) {
		return nil
	}
	err := r.file.Close()
	for d := time.Microsecond; r.seat.held(); d = min(2*d, time.Millisecond) {
		time.Sleep(d)
	}
	r.unmap()
	return err
}
