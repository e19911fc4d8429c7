package runtime

import "fmt"

// reservation is a ring buffer record a run has reserved and not yet
// submitted or discarded.
type reservation struct {
	region uint32
	rb     *RingBuffer
	num    uint64 // the record's number in rb
}

// The flags of bpf_ringbuf_output, submit and discard: BPF_RB_NO_WAKEUP
// and BPF_RB_FORCE_WAKEUP. They choose whether a waiting reader is woken;
// the runtime's readers poll, so they change nothing else.
const ringbufWakeupFlags = 1 | 2

func (m *Machine) ringBuffer(handle uint64) (*RingBuffer, error) {
	mp, err := m.Map(handle)
	if err != nil {
		return nil, err
	}
	rb, ok := mp.(*RingBuffer)
	if !ok {
		return nil, fmt.Errorf("map %s is not a user-space ring buffer", mp.Spec().Name)
	}
	return rb, nil
}

// ringbufOutput is bpf_ringbuf_output(map, data, size, flags): flags
// other than the wakeup ones are -EINVAL, a full ring -EAGAIN, as in the
// kernel; a record of 0 bytes is a record.
func ringbufOutput(m *Machine, r1, r2, r3, r4, _ uint64) (uint64, error) {
	rb, err := m.ringBuffer(r1)
	if err != nil {
		return 0, err
	}
	data, err := m.Bytes(r2, r3)
	if err != nil {
		return 0, fmt.Errorf("data: %w", err)
	}
	if r4&^ringbufWakeupFlags != 0 {
		return negErrno(22), nil
	}
	if err := m.ChargeBytes(len(data)); err != nil {
		return 0, err
	}
	if !rb.Write(data) {
		return negErrno(11), nil
	}
	return 0, nil
}

// ringbufReserve is bpf_ringbuf_reserve(map, size, flags): NULL for any
// flags, as in the kernel, or when the ring has no room.
func ringbufReserve(m *Machine, r1, r2, r3, _, _ uint64) (uint64, error) {
	rb, err := m.ringBuffer(r1)
	if err != nil {
		return 0, err
	}
	if r3 != 0 || r2 >= uint64(rb.spec.MaxEntries) {
		return 0, nil
	}
	// The record is allocated and cleared.
	if err := m.ChargeBytes(int(r2)); err != nil {
		return 0, err
	}
	rec, num, ok := rb.reserve(int(r2))
	if !ok {
		return 0, nil
	}
	addr, err := m.AddRegion("ring buffer "+rb.spec.Name+" record", rec, true)
	if err != nil {
		rb.finish(num, true)
		return 0, err
	}
	m.pending = append(m.pending, reservation{region: uint32(addr >> 32), rb: rb, num: num})
	return addr, nil
}

// finish submits or discards the reservation at addr and unmaps it, so a
// later access faults.
func (m *Machine) finish(addr uint64, submit bool) error {
	for i, p := range m.pending {
		if uint64(p.region) == addr>>32 && addr&0xffffffff == 0 {
			p.rb.finish(p.num, !submit)
			m.rd[p.region], m.wr[p.region] = nil, nil
			m.pending = append(m.pending[:i], m.pending[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%#x is not a pending ring buffer reservation", addr)
}

func ringbufSubmit(m *Machine, r1, _, _, _, _ uint64) (uint64, error) {
	return 0, m.finish(r1, true)
}

func ringbufDiscard(m *Machine, r1, _, _, _, _ uint64) (uint64, error) {
	return 0, m.finish(r1, false)
}
