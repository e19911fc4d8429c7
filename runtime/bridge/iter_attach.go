//go:build !windows

package bridge

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cilium/ebpf/link"
)

// attachIter attaches an iterator that takes no arguments (iter/bpf_map,
// iter/tcp, ...): a link that can be pinned, whose instances read the
// program's output (link.Iter's Open).
func (p Program) attachIter() (link.Link, error) {
	lk, err := p.iter(nil, nil)
	return p.wrap("iterator", lk, err)
}

// attachIterTask attaches a task iterator walking the tasks task selects.
func (p Program) attachIterTask(task IterTask) (link.Link, error) {
	lk, err := p.iter(nil, taskInfo(task))
	return p.wrap("task iterator", lk, err)
}

// attachIterMap attaches a map element iterator walking m.
func (p Program) attachIterMap(m IterMap) (link.Link, error) {
	lk, err := p.iter(m, nil)
	return p.wrap("map element iterator", lk, err)
}

// attachIterCgroup attaches a cgroup iterator walking from cg.
func (p Program) attachIterCgroup(cg IterCgroup) (link.Link, error) {
	lk, err := p.iter(nil, cgroupInfo(cg))
	return p.wrap("cgroup iterator", lk, err)
}

// openIter attaches an iterator that takes no arguments and returns a
// reader of its output: each Read runs the program over the next
// elements, io.EOF ends the walk. Closing the reader detaches the
// iterator; Close of the objects closes it too.
func (p Program) openIter() (io.ReadCloser, error) {
	return p.open(p.attachIter())
}

// openIterTask is OpenIter of a task iterator walking the tasks task
// selects.
func (p Program) openIterTask(task IterTask) (io.ReadCloser, error) {
	return p.open(p.attachIterTask(task))
}

// openIterMap is OpenIter of a map element iterator walking m.
func (p Program) openIterMap(m IterMap) (io.ReadCloser, error) {
	return p.open(p.attachIterMap(m))
}

// openIterCgroup is OpenIter of a cgroup iterator walking from cg.
func (p Program) openIterCgroup(cg IterCgroup) (io.ReadCloser, error) {
	return p.open(p.attachIterCgroup(cg))
}

// iter makes the iterator link: through cilium/ebpf when it takes no
// argument or a map, else (task and cgroup arguments, which cilium/ebpf
// cannot pass) with BPF_LINK_CREATE and the raw bpf_iter_link_info.
func (p Program) iter(m IterMap, info []byte) (link.Link, error) {
	if p.prog == nil {
		return nil, nil // wrap reports it
	}
	if info != nil {
		return createIterLink(p.prog, info)
	}
	opts := link.IterOptions{Program: p.prog}
	if m != nil {
		if opts.Map = m.Raw(); opts.Map == nil {
			return nil, fmt.Errorf("map element iterator: the map is not in the kernel (%w)", ErrInProcess)
		}
	}
	return link.AttachIter(opts)
}

// open opens an instance of the iterator link lk and hands the reader the
// link to detach on Close.
func (p Program) open(lk link.Link, err error) (io.ReadCloser, error) {
	if err != nil {
		return nil, err
	}
	it, ok := lk.(*link.Iter)
	if !ok {
		p.links.remove(lk)
		return nil, fmt.Errorf("program %s: the link is a %T, not an iterator", p.name, lk)
	}
	rd, err := it.Open()
	if err != nil {
		p.links.remove(lk)
		return nil, fmt.Errorf("program %s: open iterator: %w", p.name, err)
	}
	return &iterReader{ReadCloser: rd, lk: lk, links: p.links}, nil
}

// iterReader is an iterator's output; Close closes the instance and the
// link it was opened from.
type iterReader struct {
	io.ReadCloser
	lk    link.Link
	links *Links
}

func (r *iterReader) Close() error {
	err := r.ReadCloser.Close()
	if lerr := r.links.remove(r.lk); err == nil {
		err = lerr
	}
	return err
}

// taskInfo is union bpf_iter_link_info's task member.
func taskInfo(t IterTask) []byte {
	b := make([]byte, 12)
	binary.NativeEndian.PutUint32(b[0:], t.TID)
	binary.NativeEndian.PutUint32(b[4:], t.PID)
	binary.NativeEndian.PutUint32(b[8:], t.PIDFD)
	return b
}

// cgroupInfo is union bpf_iter_link_info's cgroup member.
func cgroupInfo(c IterCgroup) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint32(b[0:], uint32(c.Order))
	binary.NativeEndian.PutUint32(b[4:], uint32(c.FD))
	binary.NativeEndian.PutUint64(b[8:], c.ID)
	return b
}
