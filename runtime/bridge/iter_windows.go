package bridge

import (
	"io"

	"github.com/cilium/ebpf/link"
)

// AttachIter fails: iterators are Linux's.
func (p Program) AttachIter() (link.Link, error) { return p.noAttach("iterator") }

// AttachIterTask fails: iterators are Linux's.
func (p Program) AttachIterTask(task IterTask) (link.Link, error) { return p.noAttach("task iterator") }

// AttachIterMap fails: iterators are Linux's.
func (p Program) AttachIterMap(m IterMap) (link.Link, error) {
	return p.noAttach("map element iterator")
}

// AttachIterCgroup fails: iterators are Linux's.
func (p Program) AttachIterCgroup(cg IterCgroup) (link.Link, error) {
	return p.noAttach("cgroup iterator")
}

// OpenIter fails: iterators are Linux's.
func (p Program) OpenIter() (io.ReadCloser, error) { return nil, p.noIter() }

// OpenIterTask fails: iterators are Linux's.
func (p Program) OpenIterTask(task IterTask) (io.ReadCloser, error) { return nil, p.noIter() }

// OpenIterMap fails: iterators are Linux's.
func (p Program) OpenIterMap(m IterMap) (io.ReadCloser, error) { return nil, p.noIter() }

// OpenIterCgroup fails: iterators are Linux's.
func (p Program) OpenIterCgroup(cg IterCgroup) (io.ReadCloser, error) { return nil, p.noIter() }

func (p Program) noIter() error {
	_, err := p.noAttach("iterator")
	return err
}
