package bridge

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Links collects the links made by Attach methods so that closing the
// skeleton's objects detaches everything. The zero value is ready to use.
type Links struct {
	mu    sync.Mutex
	links []link.Link
}

// Close closes every link, newest first, and returns the first error.
func (l *Links) Close() error {
	l.mu.Lock()
	links := l.links
	l.links = nil
	l.mu.Unlock()
	return closeLinks(links)
}

// closeLinks closes links, newest first, and returns the first error.
func closeLinks(links []link.Link) error {
	var first error
	for i := len(links) - 1; i >= 0; i-- {
		if err := links[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Program is a loaded kernel program with the attach operations its section
// name allows. The generated skeleton gives each program a type embedding
// Program and an Attach method for its section. When the object runs in
// process, kernel programs are not loaded and every operation fails with
// ErrInProcess.
type Program struct {
	prog     *ebpf.Program
	name     string
	links    *Links
	set      *Set
	disabled bool
	kind     Kind
}

// NewProgram returns the kernel program name of s; links made by its Attach
// methods are closed with s.
func NewProgram(s *Set, name string) (Program, error) {
	p := Program{name: name, links: &s.Links, set: s}
	if s.disabled[name] || s.Spec != nil && s.Spec.Programs[name] == nil {
		// Switched off before load, or removed from the spec.
		p.disabled = true
		return p, nil
	}
	if s.Coll == nil {
		return p, nil
	}
	if p.prog = s.Coll.Programs[name]; p.prog == nil {
		return p, fmt.Errorf("program %s: not loaded", name)
	}
	return p, nil
}

// Raw returns the underlying cilium/ebpf program, or nil in process or
// when the program was disabled.
func (p Program) Raw() *ebpf.Program { return p.prog }

// Disabled reports whether the program's autoload was off: it was not
// loaded, and Attach and Run fail with ErrDisabled.
func (p Program) Disabled() bool { return p.disabled }

// notLoaded is the error of an operation on a program that is not in the
// kernel: disabled, or the object runs in process.
func (p Program) notLoaded() error {
	if p.disabled {
		return ErrDisabled
	}
	return ErrInProcess
}

// Run runs the program once in the kernel with BPF_PROG_TEST_RUN.
func (p Program) Run(opts *ebpf.RunOptions) (uint32, error) {
	if p.prog == nil {
		return 0, fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	return p.prog.Run(opts)
}
