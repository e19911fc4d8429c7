package bridge

import (
	"io"

	"github.com/cilium/ebpf/link"
)

// attachIter fails: iterators are Linux's.
func (p Program) attachIter() (link.Link, error) { return p.noAttach("iterator") }

// attachIterTask fails: iterators are Linux's.
func (p Program) attachIterTask(task IterTask) (link.Link, error) { return p.noAttach("task iterator") }

// attachIterMap fails: iterators are Linux's.
func (p Program) attachIterMap(m IterMap) (link.Link, error) {
	return p.noAttach("map element iterator")
}

// attachIterCgroup fails: iterators are Linux's.
func (p Program) attachIterCgroup(cg IterCgroup) (link.Link, error) {
	return p.noAttach("cgroup iterator")
}

// openIter fails: iterators are Linux's.
func (p Program) openIter() (io.ReadCloser, error) { return nil, p.noIter() }

// openIterTask fails: iterators are Linux's.
func (p Program) openIterTask(task IterTask) (io.ReadCloser, error) { return nil, p.noIter() }

// openIterMap fails: iterators are Linux's.
func (p Program) openIterMap(m IterMap) (io.ReadCloser, error) { return nil, p.noIter() }

// openIterCgroup fails: iterators are Linux's.
func (p Program) openIterCgroup(cg IterCgroup) (io.ReadCloser, error) { return nil, p.noIter() }

func (p Program) noIter() error {
	_, err := p.noAttach("iterator")
	return err
}
