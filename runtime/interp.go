package runtime

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"
)

// exec is the interpreter: one dense switch on the pre-decoded opcode
// byte, registers in a local array indexed with a mask so the compiler
// drops the bounds checks, and the budget charged only where control
// transfers (taken jumps, calls, exits). exec must stay below the
// compiler's "big function" size (5000 IR nodes; go build -gcflags=-m=2
// says "considered 'big'"): past it, inlined callees are limited to a cost
// of 20 and the memory accessors become calls, costing more than any case
// added. Fault paths therefore only call memFault, and rare operations live
// in rareALU.
func (m *Machine) exec(r1, r2 uint64) (uint64, error) {
	insns := m.prog.insns
	mem := &m.Memory
	// The register file has 256 entries so that indexing it with a uint8
	// needs neither a mask nor a bounds check; only r0..r10 are used.
	r := &m.regs
	clear(r[:11])
	r[1], r[2], r[10] = r1, r2, StackTop(0)
	// The budget, call depth and start of the current straight-line run
	// live in m, not in locals: they change only at control transfers, and
	// keeping them out of registers spares the dispatch path spills.
	m.depth, m.start = 0, 0
	// Instructions are addressed by pointer, not index: validation has
	// proved that every jump, call and fall-through stays inside insns, so
	// the bounds check of insns[pc] on every dispatch would never fire.
	// The base address lives in m, read only at control transfers and
	// errors, which keeps it from occupying a register in the dispatch path.
	m.base = unsafe.Pointer(unsafe.SliceData(insns))
	in := (*insn)(m.base)
	for {
		switch in.op {
		// ALU64, immediate and register.
		case 0x07:
			r[in.dst] += uint64(in.imm)
			in = next(in)
			continue
		case 0x0f:
			r[in.dst] += r[in.src]
			in = next(in)
			continue
		case 0x17:
			r[in.dst] -= uint64(in.imm)
			in = next(in)
			continue
		case 0x1f:
			r[in.dst] -= r[in.src]
			in = next(in)
			continue
		case 0x27:
			r[in.dst] *= uint64(in.imm)
			in = next(in)
			continue
		case 0x2f:
			r[in.dst] *= r[in.src]
			in = next(in)
			continue
		case 0x37:
			if in.imm == 0 {
				r[in.dst] = 0
			} else {
				r[in.dst] /= uint64(in.imm)
			}
			in = next(in)
			continue
		case 0x3f:
			if s := r[in.src]; s == 0 {
				r[in.dst] = 0
			} else {
				r[in.dst] /= s
			}
			in = next(in)
			continue
		case 0x47:
			r[in.dst] |= uint64(in.imm)
			in = next(in)
			continue
		case 0x4f:
			r[in.dst] |= r[in.src]
			in = next(in)
			continue
		case 0x57:
			r[in.dst] &= uint64(in.imm)
			in = next(in)
			continue
		case 0x5f:
			r[in.dst] &= r[in.src]
			in = next(in)
			continue
		case 0x67:
			r[in.dst] <<= uint64(in.imm) & 63
			in = next(in)
			continue
		case 0x6f:
			r[in.dst] <<= r[in.src] & 63
			in = next(in)
			continue
		case 0x77:
			r[in.dst] >>= uint64(in.imm) & 63
			in = next(in)
			continue
		case 0x7f:
			r[in.dst] >>= r[in.src] & 63
			in = next(in)
			continue
		case 0x87:
			r[in.dst] = -r[in.dst]
			in = next(in)
			continue
		case 0x97:
			if in.imm != 0 {
				r[in.dst] %= uint64(in.imm)
			}
			in = next(in)
			continue
		case 0x9f:
			if s := r[in.src]; s != 0 {
				r[in.dst] %= s
			}
			in = next(in)
			continue
		case 0xa7:
			r[in.dst] ^= uint64(in.imm)
			in = next(in)
			continue
		case 0xaf:
			r[in.dst] ^= r[in.src]
			in = next(in)
			continue
		case 0xb7:
			r[in.dst] = uint64(in.imm)
			in = next(in)
			continue
		case 0xbf:
			r[in.dst] = r[in.src]
			in = next(in)
			continue
		case 0xc7:
			r[in.dst] = uint64(int64(r[in.dst]) >> (uint64(in.imm) & 63))
			in = next(in)
			continue
		case 0xcf:
			r[in.dst] = uint64(int64(r[in.dst]) >> (r[in.src] & 63))
			in = next(in)
			continue

		// ALU, 32-bit: results are zero-extended.
		case 0x04:
			r[in.dst] = uint64(uint32(r[in.dst]) + uint32(in.imm))
			in = next(in)
			continue
		case 0x0c:
			r[in.dst] = uint64(uint32(r[in.dst]) + uint32(r[in.src]))
			in = next(in)
			continue
		case 0x14:
			r[in.dst] = uint64(uint32(r[in.dst]) - uint32(in.imm))
			in = next(in)
			continue
		case 0x1c:
			r[in.dst] = uint64(uint32(r[in.dst]) - uint32(r[in.src]))
			in = next(in)
			continue
		case 0x24:
			r[in.dst] = uint64(uint32(r[in.dst]) * uint32(in.imm))
			in = next(in)
			continue
		case 0x2c:
			r[in.dst] = uint64(uint32(r[in.dst]) * uint32(r[in.src]))
			in = next(in)
			continue
		case 0x34:
			if s := uint32(in.imm); s == 0 {
				r[in.dst] = 0
			} else {
				r[in.dst] = uint64(uint32(r[in.dst]) / s)
			}
			in = next(in)
			continue
		case 0x3c:
			if s := uint32(r[in.src]); s == 0 {
				r[in.dst] = 0
			} else {
				r[in.dst] = uint64(uint32(r[in.dst]) / s)
			}
			in = next(in)
			continue
		case 0x44:
			r[in.dst] = uint64(uint32(r[in.dst]) | uint32(in.imm))
			in = next(in)
			continue
		case 0x4c:
			r[in.dst] = uint64(uint32(r[in.dst]) | uint32(r[in.src]))
			in = next(in)
			continue
		case 0x54:
			r[in.dst] = uint64(uint32(r[in.dst]) & uint32(in.imm))
			in = next(in)
			continue
		case 0x5c:
			r[in.dst] = uint64(uint32(r[in.dst]) & uint32(r[in.src]))
			in = next(in)
			continue
		case 0x64:
			r[in.dst] = uint64(uint32(r[in.dst]) << (uint32(in.imm) & 31))
			in = next(in)
			continue
		case 0x6c:
			r[in.dst] = uint64(uint32(r[in.dst]) << (uint32(r[in.src]) & 31))
			in = next(in)
			continue
		case 0x74:
			r[in.dst] = uint64(uint32(r[in.dst]) >> (uint32(in.imm) & 31))
			in = next(in)
			continue
		case 0x7c:
			r[in.dst] = uint64(uint32(r[in.dst]) >> (uint32(r[in.src]) & 31))
			in = next(in)
			continue
		case 0x84:
			r[in.dst] = uint64(-uint32(r[in.dst]))
			in = next(in)
			continue
		case 0x94:
			d := uint32(r[in.dst])
			if s := uint32(in.imm); s != 0 {
				d %= s
			}
			r[in.dst] = uint64(d)
			in = next(in)
			continue
		case 0x9c:
			d := uint32(r[in.dst])
			if s := uint32(r[in.src]); s != 0 {
				d %= s
			}
			r[in.dst] = uint64(d)
			in = next(in)
			continue
		case 0xa4:
			r[in.dst] = uint64(uint32(r[in.dst]) ^ uint32(in.imm))
			in = next(in)
			continue
		case 0xac:
			r[in.dst] = uint64(uint32(r[in.dst]) ^ uint32(r[in.src]))
			in = next(in)
			continue
		case 0xb4:
			r[in.dst] = uint64(uint32(in.imm))
			in = next(in)
			continue
		case 0xbc:
			r[in.dst] = uint64(uint32(r[in.src]))
			in = next(in)
			continue
		case 0xc4:
			r[in.dst] = uint64(uint32(int32(r[in.dst]) >> (uint32(in.imm) & 31)))
			in = next(in)
			continue
		case 0xcc:
			r[in.dst] = uint64(uint32(int32(r[in.dst]) >> (uint32(r[in.src]) & 31)))
			in = next(in)
			continue

		case opNop:
			in = next(in)
			continue

		// 64-bit immediate load: the second slot is skipped.
		case 0x18:
			r[in.dst] = uint64(in.imm)
			in = (*insn)(unsafe.Add(unsafe.Pointer(in), 2*unsafe.Sizeof(insn{})))
			continue

		// Loads.
		case 0x61:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case 0x69:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case 0x71:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case 0x79:
			v, ok := mem.Read64(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case 0x81:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int32(v)))
			in = next(in)
			continue
		case 0x89:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int16(v)))
			in = next(in)
			continue
		case 0x91:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int8(v)))
			in = next(in)
			continue

		// Stores of an immediate.
		case 0x62:
			if !mem.Write32(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x6a:
			if !mem.Write16(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x72:
			if !mem.Write8(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x7a:
			if !mem.Write64(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue

		// Stores of a register.
		case 0x63:
			if !mem.Write32(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x6b:
			if !mem.Write16(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x73:
			if !mem.Write8(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case 0x7b:
			if !mem.Write64(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue

		case 0xc3, 0xdb:
			// Calls below recompute in from its index afterwards, so that in
			// is not live across a call: otherwise the compiler spills it on
			// every dispatch, calls or not.
			pc := index(m.base, in)
			if err := m.atomic(in, r, pc); err != nil {
				return 0, err
			}
			in = at(m.base, pc+1)
			continue

		// Jumps, 64-bit compare.
		case 0x05:
			goto jump
		case 0x15:
			if r[in.dst] == uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x1d:
			if r[in.dst] == r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0x25:
			if r[in.dst] > uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x2d:
			if r[in.dst] > r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0x35:
			if r[in.dst] >= uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x3d:
			if r[in.dst] >= r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0x45:
			if r[in.dst]&uint64(in.imm) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case 0x4d:
			if r[in.dst]&r[in.src] != 0 {
				goto jump
			}
			in = next(in)
			continue
		case 0x55:
			if r[in.dst] != uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x5d:
			if r[in.dst] != r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0x65:
			if int64(r[in.dst]) > in.imm {
				goto jump
			}
			in = next(in)
			continue
		case 0x6d:
			if int64(r[in.dst]) > int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x75:
			if int64(r[in.dst]) >= in.imm {
				goto jump
			}
			in = next(in)
			continue
		case 0x7d:
			if int64(r[in.dst]) >= int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xa5:
			if r[in.dst] < uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xad:
			if r[in.dst] < r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0xb5:
			if r[in.dst] <= uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xbd:
			if r[in.dst] <= r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case 0xc5:
			if int64(r[in.dst]) < in.imm {
				goto jump
			}
			in = next(in)
			continue
		case 0xcd:
			if int64(r[in.dst]) < int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xd5:
			if int64(r[in.dst]) <= in.imm {
				goto jump
			}
			in = next(in)
			continue
		case 0xdd:
			if int64(r[in.dst]) <= int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue

		// Jumps, 32-bit compare.
		case 0x16:
			if uint32(r[in.dst]) == uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x1e:
			if uint32(r[in.dst]) == uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x26:
			if uint32(r[in.dst]) > uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x2e:
			if uint32(r[in.dst]) > uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x36:
			if uint32(r[in.dst]) >= uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x3e:
			if uint32(r[in.dst]) >= uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x46:
			if uint32(r[in.dst])&uint32(in.imm) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case 0x4e:
			if uint32(r[in.dst])&uint32(r[in.src]) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case 0x56:
			if uint32(r[in.dst]) != uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x5e:
			if uint32(r[in.dst]) != uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x66:
			if int32(r[in.dst]) > int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x6e:
			if int32(r[in.dst]) > int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0x76:
			if int32(r[in.dst]) >= int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0x7e:
			if int32(r[in.dst]) >= int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xa6:
			if uint32(r[in.dst]) < uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xae:
			if uint32(r[in.dst]) < uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xb6:
			if uint32(r[in.dst]) <= uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xbe:
			if uint32(r[in.dst]) <= uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xc6:
			if int32(r[in.dst]) < int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xce:
			if int32(r[in.dst]) < int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case 0xd6:
			if int32(r[in.dst]) <= int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case 0xde:
			if int32(r[in.dst]) <= int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue

		// Calls and exit.
		case opCallFunc:
			pc := index(m.base, in)
			v, err := m.CallFunc(pc, in.imm, r[1], r[2], r[3], r[4], r[5])
			if err != nil {
				return 0, err
			}
			r[0] = v
			in = at(m.base, pc+1)
			continue
		case opCallLocal, 0x8d:
			target := int(in.imm)
			pc := index(m.base, in)
			if in.op == 0x8d {
				t, err := m.callx(pc, r[in.dst], r)
				if err != nil {
					return 0, err
				}
				if t < 0 {
					in = at(m.base, pc+1) // a helper, already called
					continue
				}
				target = t
			}
			if m.depth+1 >= MaxFrames {
				return 0, &RunError{Insn: pc, Err: fmt.Errorf("%w: more than %d frames", ErrCallDepth, MaxFrames)}
			}
			if m.budget -= int64(pc - m.start + 1); m.budget < 0 {
				return 0, &RunError{Insn: pc, Err: ErrBudget}
			}
			m.frames[m.depth] = frame{ret: pc, r6: r[6], r7: r[7], r8: r[8], r9: r[9]}
			m.depth++
			r[10] = StackTop(m.depth)
			m.start = target
			in = at(m.base, target)
			continue
		case 0x95:
			pc := index(m.base, in)
			if m.budget -= int64(pc - m.start + 1); m.budget < 0 {
				return 0, &RunError{Insn: pc, Err: ErrBudget}
			}
			if m.depth == 0 {
				return r[0], nil
			}
			m.depth--
			f := &m.frames[m.depth]
			r[6], r[7], r[8], r[9] = f.r6, f.r7, f.r8, f.r9
			r[10] = StackTop(m.depth)
			m.start = f.ret + 1
			in = at(m.base, m.start)
			continue

		// Fused increment and loop test (see fuse).
		case opAddJltImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v < uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJltReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v < r[in.src] {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJleImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v <= uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJleReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v <= r[in.src] {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJneImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v != uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJneReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v != r[in.src] {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJsltImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if int64(v) < in.imm>>32 {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opAddJsltReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if int64(v) < int64(r[in.src]) {
				goto fusedJump
			}
			in = at2(in)
			continue

		// Fused pairs (see fuse): the second slot is skipped or jumped over.
		case opMovAddImm:
			r[in.dst] = r[in.src] + uint64(in.imm)
			in = at2(in)
			continue
		case opMovSubImm:
			r[in.dst] = r[in.src] - uint64(in.imm)
			in = at2(in)
			continue
		case opMovMulImm:
			r[in.dst] = r[in.src] * uint64(in.imm)
			in = at2(in)
			continue
		case opMovAndImm:
			r[in.dst] = r[in.src] & uint64(in.imm)
			in = at2(in)
			continue
		case opMovOrImm:
			r[in.dst] = r[in.src] | uint64(in.imm)
			in = at2(in)
			continue
		case opMovXorImm:
			r[in.dst] = r[in.src] ^ uint64(in.imm)
			in = at2(in)
			continue
		case opMovLshImm:
			r[in.dst] = r[in.src] << (uint64(in.imm) & 63)
			in = at2(in)
			continue
		case opMovRshImm:
			r[in.dst] = r[in.src] >> (uint64(in.imm) & 63)
			in = at2(in)
			continue
		case opMovArshImm:
			r[in.dst] = uint64(int64(r[in.src]) >> (uint64(in.imm) & 63))
			in = at2(in)
			continue
		case opMovAddReg:
			r[in.dst] = r[in.src] + r[in.x]
			in = at2(in)
			continue
		case opMovSubReg:
			r[in.dst] = r[in.src] - r[in.x]
			in = at2(in)
			continue
		case opMovMulReg:
			r[in.dst] = r[in.src] * r[in.x]
			in = at2(in)
			continue
		case opMovAndReg:
			r[in.dst] = r[in.src] & r[in.x]
			in = at2(in)
			continue
		case opMovOrReg:
			r[in.dst] = r[in.src] | r[in.x]
			in = at2(in)
			continue
		case opMovXorReg:
			r[in.dst] = r[in.src] ^ r[in.x]
			in = at2(in)
			continue
		case opMovLshReg:
			r[in.dst] = r[in.src] << (r[in.x] & 63)
			in = at2(in)
			continue
		case opMovRshReg:
			r[in.dst] = r[in.src] >> (r[in.x] & 63)
			in = at2(in)
			continue
		case opMovDivReg:
			if d := r[in.x]; d == 0 {
				r[in.dst] = 0
			} else {
				r[in.dst] = r[in.src] / d
			}
			in = at2(in)
			continue
		case opMovModReg:
			if d := r[in.x]; d == 0 {
				r[in.dst] = r[in.src]
			} else {
				r[in.dst] = r[in.src] % d
			}
			in = at2(in)
			continue
		case opLdxbAdd:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] += v
			in = at2(in)
			continue
		case opLdxbXor:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] ^= v
			in = at2(in)
			continue
		case opLdxbOr:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] |= v
			in = at2(in)
			continue
		case opLdxhAdd:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] += v
			in = at2(in)
			continue
		case opLdxhXor:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] ^= v
			in = at2(in)
			continue
		case opLdxhOr:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] |= v
			in = at2(in)
			continue
		case opLdxwAdd:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] += v
			in = at2(in)
			continue
		case opLdxwXor:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] ^= v
			in = at2(in)
			continue
		case opLdxwOr:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] |= v
			in = at2(in)
			continue
		case opLdxdwAdd:
			v, ok := mem.Read64(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] += v
			in = at2(in)
			continue
		case opLdxdwXor:
			v, ok := mem.Read64(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] ^= v
			in = at2(in)
			continue
		case opLdxdwOr:
			v, ok := mem.Read64(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			r[in.x] |= v
			in = at2(in)
			continue
		case opAddImmJa:
			r[in.dst] += uint64(in.imm)
			goto fusedJump
		case opSubImmJa:
			r[in.dst] -= uint64(in.imm)
			goto fusedJump
		case opMulImmJa:
			r[in.dst] *= uint64(in.imm)
			goto fusedJump
		case opAndImmJa:
			r[in.dst] &= uint64(in.imm)
			goto fusedJump
		case opOrImmJa:
			r[in.dst] |= uint64(in.imm)
			goto fusedJump
		case opXorImmJa:
			r[in.dst] ^= uint64(in.imm)
			goto fusedJump
		case opMovImmJa:
			r[in.dst] = uint64(in.imm)
			goto fusedJump

		case opInvalid:
			return 0, &RunError{Insn: index(m.base, in), Err: fmt.Errorf("execution reached the second slot of an lddw")}
		case opSdiv64Imm, opSdiv64Reg, opSmod64Imm, opSmod64Reg,
			opSdiv32Imm, opSdiv32Reg, opSmod32Imm, opSmod32Reg,
			opMovsx64, opMovsx32, opTrunc16, opTrunc32, opSwap16, opSwap32, opSwap64:
			// The rarer operations live in rareALU, which keeps exec
			// small enough for the compiler to inline the memory
			// accessors into it (see exec). Listing them here also keeps
			// the jump table complete up to 0xff, so dispatch needs no
			// range check.
			rareALU(in, r)
			in = next(in)
			continue
		default:
			return 0, &RunError{Insn: index(m.base, in), Err: fmt.Errorf("invalid opcode %#02x", in.op)}
		}

	jump:
		// Charging the finished straight-line run at each taken jump
		// makes the budget an exact count of executed instruction slots
		// (lddw counts two) at the cost of one subtraction per jump.
		if m.budget -= int64(index(m.base, in) - m.start + 1); m.budget < 0 {
			return 0, &RunError{Insn: index(m.base, in), Err: ErrBudget}
		}
		m.start = int(in.off)
		in = at(m.base, m.start)
		continue

	fusedJump:
		// The jump is the second slot of the pair.
		if m.budget -= int64(index(m.base, in) + 2 - m.start); m.budget < 0 {
			return 0, &RunError{Insn: index(m.base, in) + 1, Err: ErrBudget}
		}
		m.start = int(in.off)
		in = at(m.base, m.start)
	}
}

// next is the instruction after in. Each case advances and continues on
// its own instead of sharing a tail, which saves a jump per instruction.
func next(in *insn) *insn {
	return (*insn)(unsafe.Add(unsafe.Pointer(in), unsafe.Sizeof(insn{})))
}

// at2 is the instruction after a fused pair.
func at2(in *insn) *insn {
	return (*insn)(unsafe.Add(unsafe.Pointer(in), 2*unsafe.Sizeof(insn{})))
}

// index is the position of in within the instructions starting at base.
func index(base unsafe.Pointer, in *insn) int {
	return int((uintptr(unsafe.Pointer(in)) - uintptr(base)) / unsafe.Sizeof(insn{}))
}

// at is the instruction at index i; the validator has checked i.
func at(base unsafe.Pointer, i int) *insn {
	return (*insn)(unsafe.Add(base, uintptr(i)*unsafe.Sizeof(insn{})))
}

// atomic executes one STX|ATOMIC instruction. Runs are single-threaded, so
// a plain read-modify-write is atomic with respect to the program.
func (m *Machine) atomic(in *insn, r *[256]uint64, pc int) error {
	size := uint64(4)
	if in.op == 0xdb {
		size = 8
	}
	addr := r[in.dst] + uint64(in.off)
	b, err := m.WritableBytes(addr, size)
	if err != nil {
		return m.Fault(addr, size, true, pc)
	}
	var old uint64
	if size == 4 {
		old = uint64(binary.LittleEndian.Uint32(b))
	} else {
		old = binary.LittleEndian.Uint64(b)
	}
	src := r[in.src]
	var val uint64
	switch in.imm &^ atomicFETCH {
	case atomicADD:
		val = old + src
	case atomicOR:
		val = old | src
	case atomicAND:
		val = old & src
	case atomicXOR:
		val = old ^ src
	case atomicXCHG &^ atomicFETCH:
		val = src
	case atomicCMPXCHG &^ atomicFETCH:
		val = old
		cmp := r[0]
		if size == 4 {
			cmp = uint64(uint32(cmp))
		}
		if old == cmp {
			val = src
		}
		r[0] = old
	}
	if size == 4 {
		binary.LittleEndian.PutUint32(b, uint32(val))
	} else {
		binary.LittleEndian.PutUint64(b, val)
	}
	if in.imm&atomicFETCH != 0 && in.imm != atomicCMPXCHG {
		r[in.src] = old
	}
	return nil
}

// rareALU executes the ALU operations that clang seldom emits in loops:
// signed division and modulo, sign-extending moves, byte swaps.
func rareALU(in *insn, r *[256]uint64) {
	switch in.op {
	// Signed division and modulo (offset 1). Go defines MinInt / -1 as
	// MinInt and MinInt % -1 as 0, as RFC 9669 does.
	case opSdiv64Imm:
		if in.imm == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] = uint64(int64(r[in.dst]) / in.imm)
		}
	case opSdiv64Reg:
		if s := int64(r[in.src]); s == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] = uint64(int64(r[in.dst]) / s)
		}
	case opSmod64Imm:
		if in.imm != 0 {
			r[in.dst] = uint64(int64(r[in.dst]) % in.imm)
		}
	case opSmod64Reg:
		if s := int64(r[in.src]); s != 0 {
			r[in.dst] = uint64(int64(r[in.dst]) % s)
		}
	case opSdiv32Imm:
		if s := int32(in.imm); s == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] = uint64(uint32(int32(r[in.dst]) / s))
		}
	case opSdiv32Reg:
		if s := int32(r[in.src]); s == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] = uint64(uint32(int32(r[in.dst]) / s))
		}
	case opSmod32Imm:
		d := int32(r[in.dst])
		if s := int32(in.imm); s != 0 {
			d %= s
		}
		r[in.dst] = uint64(uint32(d))
	case opSmod32Reg:
		d := int32(r[in.dst])
		if s := int32(r[in.src]); s != 0 {
			d %= s
		}
		r[in.dst] = uint64(uint32(d))
	case opMovsx64:
		s := r[in.src]
		switch in.off {
		case 8:
			r[in.dst] = uint64(int64(int8(s)))
		case 16:
			r[in.dst] = uint64(int64(int16(s)))
		default:
			r[in.dst] = uint64(int64(int32(s)))
		}
	case opMovsx32:
		s := r[in.src]
		if in.off == 8 {
			r[in.dst] = uint64(uint32(int32(int8(s))))
		} else {
			r[in.dst] = uint64(uint32(int32(int16(s))))
		}
	case opTrunc16:
		r[in.dst] = uint64(uint16(r[in.dst]))
	case opTrunc32:
		r[in.dst] = uint64(uint32(r[in.dst]))
	case opSwap16:
		r[in.dst] = uint64(bits.ReverseBytes16(uint16(r[in.dst])))
	case opSwap32:
		r[in.dst] = uint64(bits.ReverseBytes32(uint32(r[in.dst])))
	case opSwap64:
		r[in.dst] = bits.ReverseBytes64(r[in.dst])
	}
}

// memFault is the error of the load or store in that failed its bounds
// check. It recomputes address and size from the instruction, so that each
// access in exec needs only a call on its cold path.
func (m *Machine) memFault(in *insn) error {
	r := &m.regs
	addr, size, write := r[in.src]+uint64(in.off), uint64(0), false
	switch in.op {
	case opLdxbAdd, opLdxbXor, opLdxbOr:
		size = 1
	case opLdxhAdd, opLdxhXor, opLdxhOr:
		size = 2
	case opLdxwAdd, opLdxwXor, opLdxwOr:
		size = 4
	case opLdxdwAdd, opLdxdwXor, opLdxdwOr:
		size = 8
	default:
		// A plain load (class LDX) or store (ST, STX): the size is in
		// the opcode, and stores address through dst.
		size = [4]uint64{4, 2, 1, 8}[in.op>>3&3]
		if c := in.op & 7; c == classST || c == classSTX {
			addr, write = r[in.dst]+uint64(in.off), true
		}
	}
	return m.Fault(addr, size, write, index(m.base, in))
}
