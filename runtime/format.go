//skelgen:vm

package runtime

// Format appends to out the text of the bpf_trace_printk-style format f
// with args, as trace_printk and snprintf do. Built-in functions outside
// this package (printf for user programs) share the conversion rules this
// way.
func (m *Machine) Format(out, f []byte, args []uint64) ([]byte, error) {
	return m.format(out, f, args)
}

// BytesPerUnit is the bytes of work one unit of Charge pays for: helpers
// and built-ins charge one unit per BytesPerUnit bytes they copy, compare,
// hash, clear, allocate or format (rounded down, so small keys and values
// cost nothing beyond the call) and one per map entry they step over.
// Eight bytes take about as long as an interpreted instruction or less
// when copied, compared or cleared, and a few instructions' time when
// hashed or newly allocated (BenchmarkHelperWork measures ns per unit).
const BytesPerUnit = 8

// ChargeBytes charges the work of n bytes (see BytesPerUnit and Charge).
func (m *Machine) ChargeBytes(n int) error { return m.Charge(int64(n) / BytesPerUnit) }

// ChargeText charges the work of reading or writing n bytes of text: as
// ChargeBytes, for the runtime's helpers and the built-ins of other
// packages alike.
func (m *Machine) ChargeText(n int) error { return m.ChargeBytes(n) }
