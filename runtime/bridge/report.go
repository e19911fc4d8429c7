package bridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skelgen/skelgen/runtime"
)

// The built-in functions of skelgen.h: __ksym externs that user programs
// call and the runtime binds itself, so they are not part of a skeleton's
// host interface.
const (
	externPrintLog2Hist   = "skelgen_print_log2_hist"
	externPrintLinearHist = "skelgen_print_linear_hist"
	externPrintf          = "skelgen_printf_array"
	externEmit            = "skelgen_emit"
	externMapNextKey      = "skelgen_map_next_key"
)

// IsBuiltin reports whether an extern name is one of skelgen.h's built-ins.
func IsBuiltin(name string) bool {
	switch name {
	case externPrintLog2Hist, externPrintLinearHist, externPrintf, externEmit, externMapNextKey,
		externStop, externAttach, externDetach, externOutput:
		return true
	}
	return false
}

// maxString bounds the strings built-ins read from program memory.
const maxString = 4096

// bindBuiltins binds skelgen.h's built-ins in h. host wraps those that
// call the host's code: the Output writer and the Records callback, which
// they call with the program's maps unlocked (Machine.Unlocked), after
// reading what they need of them.
func bindBuiltins(h *runtime.HelperSet, o *LoadOptions, host func(runtime.Func) runtime.Func) {
	out := o.Output
	h.RegisterExtern(externPrintLog2Hist, host(func(m *runtime.Machine, r1, r2, _, _, _ uint64) (uint64, error) {
		slots, _, err := counters(m, r1, log2Slots)
		if err != nil {
			return 0, err
		}
		unit, err := m.CString(r2, maxString)
		if err != nil {
			return 0, err
		}
		m.Unlocked(func() { PrintLog2Hist(out, slots, unit) })
		return 0, nil
	}))
	h.RegisterExtern(externPrintLinearHist, host(func(m *runtime.Machine, r1, r2, r3, r4, _ uint64) (uint64, error) {
		slots, more, err := counters(m, r1, maxLinearSlots)
		if err != nil {
			return 0, err
		}
		unit, err := m.CString(r4, maxString)
		if err != nil {
			return 0, err
		}
		m.Unlocked(func() {
			PrintLinearHist(out, slots, r2, r3, unit)
			if more {
				fmt.Fprintf(out, "(slots past %d not shown)\n", maxLinearSlots-1)
			}
		})
		return 0, nil
	}))
	h.RegisterExtern(externPrintf, host(func(m *runtime.Machine, r1, r2, r3, r4, _ uint64) (uint64, error) {
		f, err := m.Bytes(r1, r2)
		if err != nil {
			return 0, err
		}
		if i := strings.IndexByte(string(f), 0); i >= 0 {
			f = f[:i]
		}
		if r4%8 != 0 || r4 > 8*12 {
			return negErrno(22), nil // -EINVAL
		}
		var args []uint64
		if r4 > 0 {
			raw, err := m.Bytes(r3, r4)
			if err != nil {
				return 0, err
			}
			for i := 0; i < len(raw); i += 8 {
				args = append(args, binary.NativeEndian.Uint64(raw[i:]))
			}
		}
		text, err := m.Format(nil, f, args)
		if errors.Is(err, runtime.ErrFormat) {
			return negErrno(22), nil
		}
		if err != nil {
			return 0, err
		}
		if err := m.ChargeText(len(f) + len(text)); err != nil {
			return 0, err
		}
		var n int
		m.Unlocked(func() { n, _ = out.Write(text) })
		return uint64(n), nil
	}))
	h.RegisterExtern(externMapNextKey, runtime.MapNextKey)
	records := o.Records
	h.RegisterExtern(externEmit, host(func(m *runtime.Machine, r1, r2, _, _, _ uint64) (uint64, error) {
		name, err := m.CString(r1, maxString)
		if err != nil {
			return 0, err
		}
		if records != nil {
			m.Unlocked(func() { records(name, int64(r2)) })
		}
		return 0, nil
	}))
}

func negErrno(e int64) uint64 { return uint64(-e) }

// Histogram slots a built-in reads: a log2 histogram has one slot per bit
// of a 64-bit value; a linear one shows at most maxLinearSlots, so that a
// map declared with a huge max_entries neither allocates nor prints in
// proportion to it.
const (
	log2Slots      = 64
	maxLinearSlots = 4096
)

// counters reads slots 0..n-1 of a map of 64-bit counters keyed by 32-bit
// slot numbers, charging the run one unit of work per entry it visits.
// Arrays are read by index up to n; hash maps are walked, so the work is
// what the map holds, not what it could hold. more reports entries past n.
func counters(m *runtime.Machine, handle uint64, n int) (slots []uint64, more bool, err error) {
	mp, err := m.Map(handle)
	if err != nil {
		return nil, false, err
	}
	spec := mp.Spec()
	if spec.KeySize != 4 || spec.ValueSize != 8 {
		return nil, false, fmt.Errorf("histogram map %s: want 4-byte keys and 8-byte counters, have %d and %d", spec.Name, spec.KeySize, spec.ValueSize)
	}
	slots = make([]uint64, n)
	key := make([]byte, 4)
	switch spec.Type {
	case runtime.Array, runtime.PerCPUArray:
		more = uint64(spec.MaxEntries) > uint64(n)
		n = min(n, int(spec.MaxEntries))
		if err := m.Charge(int64(n)); err != nil {
			return nil, false, err
		}
		for i := range n {
			binary.NativeEndian.PutUint32(key, uint32(i))
			if v, err := mp.Lookup(key); err == nil {
				slots[i] = binary.NativeEndian.Uint64(v)
			}
		}
		return slots, more, nil
	}
	next := make([]byte, 4)
	var prev []byte
	for {
		if err := m.Charge(1); err != nil {
			return nil, false, err
		}
		if mp.NextKey(prev, next) != nil {
			return slots, more, nil
		}
		i := binary.NativeEndian.Uint32(next)
		if uint64(i) >= uint64(n) {
			more = true
		} else if v, err := mp.Lookup(next); err == nil {
			slots[i] = binary.NativeEndian.Uint64(v)
		}
		prev, next = next, prev
		if next == nil {
			next = make([]byte, 4)
		}
	}
}

// PrintLog2Hist prints slots (slot i counts values in [2^i, 2^(i+1))) as
// bcc's print_log2_hist does.
func PrintLog2Hist(w io.Writer, slots []uint64, unit string) {
	last, max := lastNonZero(slots)
	if last < 0 {
		return
	}
	width := 10
	if last > 32 {
		width = 20
	}
	fmt.Fprintf(w, "%*s : count    distribution\n", 2*width+5, unit)
	for i := 0; i <= last; i++ {
		low := uint64(1) << i
		high := low<<1 - 1
		if i == 0 {
			low = 0
		}
		fmt.Fprintf(w, "%*d -> %-*d : %-8d |%s|\n", width, low, width, high, slots[i], stars(slots[i], max, 40))
	}
}

// PrintLinearHist prints slots (slot i counts values in
// [base + i*step, base + (i+1)*step)) as bcc's print_linear_hist does.
func PrintLinearHist(w io.Writer, slots []uint64, base, step uint64, unit string) {
	last, max := lastNonZero(slots)
	if last < 0 {
		return
	}
	fmt.Fprintf(w, "%10s : count    distribution\n", unit)
	for i := 0; i <= last; i++ {
		fmt.Fprintf(w, "%10d : %-8d |%s|\n", base+uint64(i)*step, slots[i], stars(slots[i], max, 40))
	}
}

func lastNonZero(slots []uint64) (last int, max uint64) {
	last = -1
	for i, v := range slots {
		if v > 0 {
			last = i
		}
		if v > max {
			max = v
		}
	}
	return last, max
}

func stars(v, max uint64, width int) string {
	n := 0
	if max > 0 {
		n = int(v * uint64(width) / max)
	}
	return strings.Repeat("*", n) + strings.Repeat(" ", width-n)
}
