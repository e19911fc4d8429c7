package runtime

// Format appends to out the text of the bpf_trace_printk-style format f
// with args, as trace_printk and snprintf do. Built-in functions outside
// this package (printf for user programs) share the conversion rules this
// way.
func (m *Machine) Format(out, f []byte, args []uint64) ([]byte, error) {
	return m.format(out, f, args)
}
