package runtime

// Format appends to out the text of the bpf_trace_printk-style format f
// with args, as trace_printk and snprintf do. Built-in functions outside
// this package (printf for user programs) share the conversion rules this
// way.
func (m *Machine) Format(out, f []byte, args []uint64) ([]byte, error) {
	return m.format(out, f, args)
}

// ChargeText charges the work of reading or writing n bytes of text (see
// Charge): one unit per 64 bytes, for the runtime's helpers and the
// built-ins of other packages alike.
func (m *Machine) ChargeText(n int) error { return m.Charge(int64(n) / 64) }
