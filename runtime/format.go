package runtime

// Format appends to out the text of the bpf_trace_printk-style format f
// with args, as trace_printk and snprintf do. Built-in functions outside
// this package (printf for user programs) share the conversion rules this
// way.
func (m *Machine) Format(out, f []byte, args []uint64) ([]byte, error) {
	return m.format(out, f, args)
}

// chargeText charges the work of reading or writing n bytes of text (see
// Machine.Charge): one unit per 64 bytes.
func (m *Machine) chargeText(n int) error { return m.Charge(int64(n) / 64) }
