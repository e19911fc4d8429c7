package bridge

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/cilium/ebpf/link"
)

// AttachOption configures a skeleton's AttachAll.
type AttachOption uint8

// KeepGoing keeps the links AttachAll made when some programs failed to
// attach; without it, a failing AttachAll detaches what it attached.
const KeepGoing AttachOption = 1

// SetAutoattach says whether AttachAll attaches the program (the default)
// or leaves it out, as libbpf's bpf_program__set_autoattach: the program is
// still loaded, and its Attach method still works.
func (p *ProgramSpec) SetAutoattach(on bool) { p.manual = !on }

// Autoattach reports whether AttachAll will attach the program.
func (p *ProgramSpec) Autoattach() bool { return !p.manual }

// SetAutoattach says whether AttachAll attaches the loaded program (the
// default) or leaves it out.
func (p Program) SetAutoattach(on bool) {
	if p.set == nil {
		return
	}
	p.set.autoMu.Lock()
	defer p.set.autoMu.Unlock()
	if p.set.manual == nil {
		p.set.manual = map[string]bool{}
	}
	p.set.manual[p.name] = !on
}

// Autoattach reports whether AttachAll will attach the program: not when
// its autoattach is off, nor when it was not loaded.
func (p Program) Autoattach() bool {
	if p.set == nil || p.disabled {
		return false
	}
	p.set.autoMu.Lock()
	defer p.set.autoMu.Unlock()
	return !p.set.manual[p.name]
}

// AttachAll attaches the programs of a skeleton's Objects whose sections
// name their attach points, then registers its struct_ops maps: the
// handles Bind set, in field order. It leaves out programs not loaded
// (autoload off) and those whose autoattach is off (SetAutoattach). It
// tries every one and returns the errors of all that failed, joined (each
// names its program). When some failed it detaches the links it made,
// unless opts hold KeepGoing; the links it keeps are closed with s.
//
// It is not inlined into the skeleton's AttachAll.
//
//go:noinline
func (s *Set) AttachAll(opts ...AttachOption) error {
	return s.attachAll(opts, append(slices.Clip(s.autoProgs), s.autoMaps...)...)
}

// attachAll is AttachAll of progs, in order.
func (s *Set) attachAll(opts []AttachOption, progs ...autoattacher) error {
	keep := slices.Contains(opts, KeepGoing)
	var errs []error
	var made []link.Link
	for _, p := range progs {
		name, attach := p.autoattach()
		if name == "" || s.disabled[name] || !(Program{set: s, name: name}).Autoattach() {
			continue
		}
		lk, err := attach()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		made = append(made, lk)
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	if !keep && len(made) > 0 {
		if derr := s.Links.remove(made...); derr != nil {
			err = errors.Join(err, fmt.Errorf("detaching the %d programs attached: %w", len(made), derr))
		}
	}
	return err
}

// remove closes the links lks, newest first, and forgets them. Links are
// told apart by identity (cilium/ebpf's are pointers); a link of a type
// that cannot be compared is closed and not forgotten.
func (l *Links) remove(lks ...link.Link) error {
	l.mu.Lock()
	l.links = slices.DeleteFunc(l.links, func(lk link.Link) bool {
		return lk != nil && reflect.TypeOf(lk).Comparable() && slices.ContainsFunc(lks, func(x link.Link) bool {
			return reflect.TypeOf(x) == reflect.TypeOf(lk) && x == lk
		})
	})
	l.mu.Unlock()
	return closeLinks(lks)
}
