//skelgen:vm

package runtime

import "fmt"

// reservation is a ring buffer record a run has reserved and not yet
// submitted or discarded.
type reservation struct {
	region uint32
	rb     *RingBuffer
	rec    []byte
}

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

func ringbufOutput(m *Machine, r1, r2, r3, _, _ uint64) (uint64, error) {
	rb, err := m.ringBuffer(r1)
	if err != nil {
		return 0, err
	}
	data, err := m.Bytes(r2, r3)
	if err != nil {
		return 0, fmt.Errorf("data: %w", err)
	}
	if err := m.ChargeBytes(len(data)); err != nil {
		return 0, err
	}
	rec := rb.reserve(len(data))
	if rec == nil {
		return negErrno(11), nil // -EAGAIN, as the kernel returns when full
	}
	copy(rec, data)
	rb.commit(rec)
	return 0, nil
}

func ringbufReserve(m *Machine, r1, r2, _, _, _ uint64) (uint64, error) {
	rb, err := m.ringBuffer(r1)
	if err != nil {
		return 0, err
	}
	if r2 > uint64(rb.spec.MaxEntries) {
		return 0, nil
	}
	// The record is allocated and cleared.
	if err := m.ChargeBytes(int(r2)); err != nil {
		return 0, err
	}
	rec := rb.reserve(int(r2))
	if rec == nil {
		return 0, nil
	}
	addr, err := m.AddRegion("ring buffer "+rb.spec.Name+" record", rec, true)
	if err != nil {
		rb.release(rec)
		return 0, err
	}
	m.pending = append(m.pending, reservation{region: uint32(addr >> 32), rb: rb, rec: rec})
	return addr, nil
}

// finish submits or discards the reservation at addr and unmaps it, so a
// later access faults.
func (m *Machine) finish(addr uint64, submit bool) error {
	for i, p := range m.pending {
		if uint64(p.region) == addr>>32 && addr&0xffffffff == 0 {
			if submit {
				p.rb.commit(p.rec)
			} else {
				p.rb.release(p.rec)
			}
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
