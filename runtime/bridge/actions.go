package bridge

import (
	"errors"

	"github.com/skelgen/skelgen/runtime"
)

// The actions of skelgen.h: __ksym externs through which a hook steers
// the tool that Serve runs. They are bound as host functions (the
// program's maps are unlocked while they run, and a callback they call
// may use them) and are not part of a skeleton's host interface. Outside
// Serve they do nothing and return -EOPNOTSUPP.
const (
	externStop   = "skelgen_stop"
	externAttach = "skelgen_attach"
	externDetach = "skelgen_detach"
	externOutput = "skelgen_output"
)

const (
	errnoNOENT      = 2
	errnoOPNOTSUPP  = 95
	maxOutputRecord = 1 << 20
)

// actions returns the actions bound to s, for its user programs' externs.
func (s *Set) actions() map[string]runtime.Func {
	return map[string]runtime.Func{
		// long skelgen_stop(int code)
		externStop: func(m *runtime.Machine, r1, _, _, _, _ uint64) (uint64, error) {
			t := s.tool.Load()
			if t == nil {
				return negErrno(errnoOPNOTSUPP), nil
			}
			if code := int(int32(r1)); code != 0 {
				t.fail(&ExitError{Code: code, Program: t.programOf(m)})
			} else {
				t.stop()
			}
			return 0, nil
		},
		// long skelgen_attach(const char *prog)
		externAttach: func(m *runtime.Machine, r1, _, _, _, _ uint64) (uint64, error) {
			t, name, errno, err := s.actionTarget(m, r1)
			if t == nil {
				return errno, err
			}
			if err := t.attach(name); err != nil {
				if errors.Is(err, errNoAttacher) {
					return negErrno(errnoNOENT), nil
				}
				return 0, err
			}
			return 0, nil
		},
		// long skelgen_detach(const char *prog)
		externDetach: func(m *runtime.Machine, r1, _, _, _, _ uint64) (uint64, error) {
			t, name, errno, err := s.actionTarget(m, r1)
			if t == nil {
				return errno, err
			}
			ok, err := t.detach(name)
			if err != nil {
				return 0, err
			}
			if !ok {
				return negErrno(errnoNOENT), nil
			}
			return 0, nil
		},
		// long skelgen_output(void *map, const void *data, __u64 size)
		externOutput: func(m *runtime.Machine, r1, r2, r3, _, _ uint64) (uint64, error) {
			t := s.tool.Load()
			if t == nil || t.machines[m] == nil {
				// Outside Serve, or a run Go code started: the callback
				// runs on Serve's goroutine only.
				return negErrno(errnoOPNOTSUPP), nil
			}
			mp, err := m.Map(r1)
			if err != nil {
				return 0, err
			}
			if r3 > maxOutputRecord {
				return negErrno(22), nil // -EINVAL
			}
			data, err := m.Bytes(r2, r3)
			if err != nil {
				return 0, err
			}
			if err := m.Charge(int64(r3+7) / 8); err != nil {
				return 0, err
			}
			st := t.streams[mp.Spec().Name]
			if st == nil {
				return negErrno(errnoNOENT), nil
			}
			if st.deliver != nil {
				st.deliver(append([]byte(nil), data...))
			}
			return 0, nil
		},
	}
}

// actionTarget is the tool serving s and the program name at addr; when
// there is no tool, errno is what the action returns.
func (s *Set) actionTarget(m *runtime.Machine, addr uint64) (t *Tool, name string, errno uint64, err error) {
	t = s.tool.Load()
	if t == nil {
		return nil, "", negErrno(errnoOPNOTSUPP), nil
	}
	name, err = m.CString(addr, maxString)
	if err != nil {
		return nil, "", 0, err
	}
	return t, name, 0, nil
}

// programOf names the hook running on m, or says it is another run.
func (t *Tool) programOf(m *runtime.Machine) string {
	if h := t.machines[m]; h != nil {
		return h.Program
	}
	return "(a run Go code started)"
}
