package bridge

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
)

// ringMem reads a kernel ring buffer in place: its consumer page mapped
// for writing, its producer page and data (mapped twice in a row by the
// kernel, so that a record that wraps reads as one slice) for reading.
// The consumer position the kernel sees is stored once per batch of
// records and before every wait, not once per record: the producer then
// finds the space of a batch freed at once. Waits go through Go's
// poller on a non-blocking duplicate of the map's descriptor, so a
// waiting reader holds no thread, and deadlines and Close wake it.
//
// mu is held for every access to the mapping (and while waiting): Close
// wakes a waiting read by closing the file, then takes mu to unmap.
type ringMem struct {
	mu       sync.Mutex
	cons     []byte   // the consumer page
	prodData []byte   // the producer page, then the data twice
	consPos  *uintptr // in cons
	prodPos  *uintptr // in prodData
	data     []byte
	mask     uintptr
	pos      uintptr // the consumer position read up to
	stored   uintptr // the one the kernel sees
	every    uintptr // store the position after this many bytes
	file     *os.File
	conn     syscall.RawConn
	closed   bool        // unmapped
	closing  atomic.Bool // the file is closed
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
	r.consPos = (*uintptr)(unsafe.Pointer(&r.cons[0]))
	r.prodPos = (*uintptr)(unsafe.Pointer(&r.prodData[0]))
	r.data = r.prodData[page:]
	r.mask = uintptr(size - 1)
	r.pos = atomic.LoadUintptr(r.consPos)
	r.stored = r.pos
	r.every = uintptr(min(size/8, 8192))
	return r, nil
}

func (r *ringMem) unmap() {
	if r.cons != nil {
		syscall.Munmap(r.cons)
	}
	if r.prodData != nil {
		syscall.Munmap(r.prodData)
	}
	r.cons, r.prodData, r.data = nil, nil, nil
}

// head returns the record at the read position, whether there is one the
// producer has committed (a discarded one included), and its length with
// the header's bits. mu is held.
func (r *ringMem) head(prod uintptr) (hdr uint32, ok bool) {
	if r.pos == prod {
		return 0, false
	}
	hdr = atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[r.pos&r.mask])))
	return hdr, hdr&ringBusy == 0
}

// next returns the next record, in place, and moves past it: its bytes
// stay valid until the position is stored, which next does (once the
// records read since the last store add up to every) only before reading
// further. ok is false when no committed record is there. mu is held.
func (r *ringMem) next() (rec []byte, ok bool) {
	if r.pos-r.stored >= r.every {
		r.store()
	}
	prod := atomic.LoadUintptr(r.prodPos)
	for {
		hdr, ok := r.head(prod)
		if !ok {
			return nil, false
		}
		n := uintptr(hdr &^ (ringBusy | ringDiscard))
		off := r.pos&r.mask + ringHdrSize
		r.pos += (ringHdrSize + n + 7) &^ 7
		if hdr&ringDiscard == 0 {
			return r.data[off : off+n], true
		}
	}
}

// store makes the read position the one the kernel sees. mu is held.
func (r *ringMem) store() {
	atomic.StoreUintptr(r.consPos, r.pos)
	r.stored = r.pos
}

// consume passes up to max of the committed records to fn, in place,
// then stores the position once. It returns how many it passed; 0 once
// the reader is closed.
func (r *ringMem) consume(max int, fn func(raw []byte, lost uint64, cpu int)) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
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
	return n
}

// read returns the next record, waiting for one, as a copy into buf
// (reused when it has room).
func (r *ringMem) read(buf []byte) ([]byte, error) {
	return r.readTo(nil, buf)
}

// readTo is read that copies the record into value, zero-filling the rest
// of value, and returns it: as a view of value when it fits there (one
// copy), else in buf's array or a new one. buf may be an earlier view of
// value: its capacity is value's length, too short for a record that does
// not fit, so append gives it a new array.
func (r *ringMem) readTo(value, buf []byte) ([]byte, error) {
	r.mu.Lock()
	for !r.closed {
		if rec, ok := r.next(); ok {
			if len(rec) <= len(value) && value != nil {
				clear(value[copy(value, rec):])
				buf = value[:len(rec)]
			} else {
				buf = append(buf[:0], rec...)
				copy(value, buf)
			}
			r.mu.Unlock()
			return buf, nil
		}
		if err := r.waitLocked(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
	}
	r.mu.Unlock()
	return nil, os.ErrClosed
}

// wait blocks until a committed record is there, the deadline passes
// (os.ErrDeadlineExceeded) or the reader is closed (os.ErrClosed).
func (r *ringMem) wait() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return os.ErrClosed
	}
	return r.waitLocked()
}

// waitLocked waits for a committed record. The position is stored first:
// the kernel wakes the reader only when a record is committed at the
// position the reader stored.
func (r *ringMem) waitLocked() error {
	r.store()
	ready := func() bool {
		_, ok := r.head(atomic.LoadUintptr(r.prodPos))
		return ok
	}
	if ready() {
		return nil
	}
	var ok bool
	err := r.conn.Read(func(uintptr) bool {
		ok = ready()
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

// setDeadline makes a wait fail with os.ErrDeadlineExceeded after t.
func (r *ringMem) setDeadline(t time.Time) { r.file.SetReadDeadline(t) }

// Close wakes a waiting reader, then unmaps the ring.
func (r *ringMem) Close() error {
	if r.closing.Swap(true) {
		return nil
	}
	err := r.file.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.unmap()
	}
	return err
}
