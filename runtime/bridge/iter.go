package bridge

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/cilium/ebpf"
)

// IterTask selects the tasks a task iterator (iter/task, iter/task_file,
// iter/task_vma) walks: the zero value walks every task of the system;
// TID one thread, PID the threads of one process, PIDFD the process a
// pidfd refers to. At most one may be set.
type IterTask struct {
	TID, PID, PIDFD uint32
}

// IterCgroup selects where a cgroup iterator (iter/cgroup) starts, by an
// open file of the cgroup's directory (FD) or the cgroup's ID, and which
// way it walks (Order).
type IterCgroup struct {
	FD    int
	ID    uint64
	Order IterOrder
}

// IterOrder is the walk of a cgroup iterator (enum bpf_cgroup_iter_order).
type IterOrder uint32

const (
	// IterSelfOnly visits the cgroup alone (the kernel's default).
	IterSelfOnly IterOrder = 1
	// IterDescendantsPre visits the cgroup's descendants, parents first.
	IterDescendantsPre IterOrder = 2
	// IterDescendantsPost visits the cgroup's descendants, children first.
	IterDescendantsPost IterOrder = 3
	// IterAncestorsUp visits the cgroup and its ancestors, up to the root.
	IterAncestorsUp IterOrder = 4
)

// IterMap is the map a map element iterator (iter/bpf_map_elem,
// iter/bpf_sk_storage_map, iter/sockmap) walks: a skeleton's typed map, or
// anything else that gives its cilium/ebpf map.
type IterMap interface {
	Raw() *ebpf.Map
}

// IterRecords yields the records an iterator's reader (Open) gives, each
// E, the C struct the program writes with bpf_seq_write (a -type of the
// skeleton), decoded in place from the bytes in the machine's byte order.
// Output that ends inside a record yields an error, and so does a read
// error; the loop may stop early.
func IterRecords[E any](r io.Reader) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var e E
		buf := bytesOf(&e)
		if len(buf) == 0 {
			yield(e, errors.New("iterator records of size 0"))
			return
		}
		for {
			n, err := io.ReadFull(r, buf)
			switch {
			case err == io.EOF:
				return
			case err == io.ErrUnexpectedEOF:
				var zero E
				yield(zero, fmt.Errorf("iterator output ends inside a record: %d of its %d bytes", n, len(buf)))
				return
			case err != nil:
				var zero E
				yield(zero, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}
