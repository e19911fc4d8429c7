package bridge

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/link"
)

// fakeLink is a link.Link that records its Close.
type fakeLink struct {
	link.Link
	name   string
	closed map[string]bool
}

func (l *fakeLink) Close() error {
	l.closed[l.name] = true
	return nil
}

// fakeAuto is a program AttachAll attaches through attach.
type fakeAuto struct {
	name   string
	attach func() (link.Link, error)
}

func (f fakeAuto) autoattach() (string, func() (link.Link, error)) { return f.name, f.attach }

func TestAttachAllReportsEveryFailure(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			s := &Set{disabled: map[string]bool{"off": true}, manual: map[string]bool{"manual": true}}
			closed := map[string]bool{}
			tried := map[string]bool{}
			auto := func(name string, fail bool) autoattacher {
				return fakeAuto{name, func() (link.Link, error) {
					tried[name] = true
					if fail {
						return nil, fmt.Errorf("program %s: attach: refused", name)
					}
					return s.Links.add(&fakeLink{name: name, closed: closed}, nil)
				}}
			}
			var opts []AttachOption
			if keep {
				opts = append(opts, KeepGoing)
			}
			err := s.attachAll(opts, auto("a", false), auto("b", true), auto("c", false), auto("d", true), auto("off", false), auto("manual", false))
			if err == nil {
				t.Fatal("no error")
			}
			for _, name := range []string{"program b", "program d"} {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error does not report %s: %v", name, err)
				}
			}
			if tried["off"] || tried["manual"] {
				t.Errorf("attached a program whose autoload or autoattach was off: %v", tried)
			}
			if !tried["c"] || !tried["d"] {
				t.Errorf("stopped at the first failure: %v", tried)
			}
			if keep == (closed["a"] || closed["c"]) {
				t.Errorf("KeepGoing %v: closed %v", keep, closed)
			}
			if n := len(s.Links.links); keep && n != 2 || !keep && n != 0 {
				t.Errorf("KeepGoing %v: %d links kept", keep, n)
			}
		})
	}
	s := &Set{}
	if err := s.attachAll(nil, fakeAuto{"a", func() (link.Link, error) { return nil, nil }}); err != nil {
		t.Errorf("AttachAll of a program that attaches: %v", err)
	}
	var one error = errors.New("program x: attach: refused")
	if err := s.attachAll(nil, fakeAuto{"x", func() (link.Link, error) { return nil, one }}); !errors.Is(err, one) {
		t.Errorf("AttachAll error %v does not wrap the program's", err)
	}
}
