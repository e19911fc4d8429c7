package runtime

import (
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
// added. Fault paths therefore only call memFault (each returning on its
// own: a shared fault label makes the compiler materialise the accessors'
// ok as a value on every load), calls and exits live in callLocal and exit,
// and rare operations in rareALU.
func (m *Machine) exec(r1, r2 uint64) (uint64, error) {
	insns := m.prog.insns
	mem := &m.Memory
	// The register file has 256 entries so that indexing it with a uint8
	// needs neither a mask nor a bounds check; only r0..r10 are used.
	// Clearing 16 of them, not 11, is padding: it places the dispatch
	// sequence below (load the opcode, load the table, jump) inside one
	// 32-byte block of exec's code. Functions start on 32-byte boundaries,
	// so that block then never straddles a 64-byte line, wherever the
	// linker puts exec; straddling one made every dispatch slower (Log2
	// 0.9 -> 2.0 ns per instruction when exec moved by 32 bytes).
	// TestDispatchInOneBlock checks the placement.
	r := &m.regs
	clear(r[:16])
	r[1], r[2], r[10] = r1, r2, StackTop(0)
	// The budget and call depth live in m, not in locals: they change only
	// at control transfers, and keeping them out of registers spares the
	// dispatch path spills.
	m.depth = 0
	// Instructions are addressed by pointer, not index: validation has
	// proved that every jump, call and fall-through stays inside insns, so
	// the bounds check of insns[pc] on every dispatch would never fire.
	// The base address lives in m, read only at control transfers and
	// errors, which keeps it from occupying a register in the dispatch path.
	m.base = unsafe.Pointer(unsafe.SliceData(insns))
	m.arm(0, m.budget)
	in := (*insn)(m.base)
	for {
		switch in.op {
		// ALU64, immediate and register.
		case OpAddImm:
			r[in.dst] += uint64(in.imm)
			in = next(in)
			continue
		case OpAddReg:
			r[in.dst] += r[in.src]
			in = next(in)
			continue
		case OpSubImm:
			r[in.dst] -= uint64(in.imm)
			in = next(in)
			continue
		case OpSubReg:
			r[in.dst] -= r[in.src]
			in = next(in)
			continue
		case OpMulImm:
			r[in.dst] *= uint64(in.imm)
			in = next(in)
			continue
		case OpMulReg:
			r[in.dst] *= r[in.src]
			in = next(in)
			continue
		case OpOrImm:
			r[in.dst] |= uint64(in.imm)
			in = next(in)
			continue
		case OpOrReg:
			r[in.dst] |= r[in.src]
			in = next(in)
			continue
		case OpAndImm:
			r[in.dst] &= uint64(in.imm)
			in = next(in)
			continue
		case OpAndReg:
			r[in.dst] &= r[in.src]
			in = next(in)
			continue
		case OpLshImm:
			r[in.dst] <<= uint64(in.imm) & 63
			in = next(in)
			continue
		case OpLshReg:
			r[in.dst] <<= r[in.src] & 63
			in = next(in)
			continue
		case OpRshImm:
			r[in.dst] >>= uint64(in.imm) & 63
			in = next(in)
			continue
		case OpRshReg:
			r[in.dst] >>= r[in.src] & 63
			in = next(in)
			continue
		case OpXorImm:
			r[in.dst] ^= uint64(in.imm)
			in = next(in)
			continue
		case OpXorReg:
			r[in.dst] ^= r[in.src]
			in = next(in)
			continue
		case OpMovImm:
			r[in.dst] = uint64(in.imm)
			in = next(in)
			continue
		case OpMovReg:
			r[in.dst] = r[in.src]
			in = next(in)
			continue
		case OpArshImm:
			r[in.dst] = uint64(int64(r[in.dst]) >> (uint64(in.imm) & 63))
			in = next(in)
			continue

		// ALU, 32-bit: results are zero-extended.
		case OpAdd32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) + uint32(in.imm))
			in = next(in)
			continue
		case OpAdd32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) + uint32(r[in.src]))
			in = next(in)
			continue
		case OpSub32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) - uint32(in.imm))
			in = next(in)
			continue
		case OpSub32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) - uint32(r[in.src]))
			in = next(in)
			continue
		case OpMul32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) * uint32(in.imm))
			in = next(in)
			continue
		case OpMul32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) * uint32(r[in.src]))
			in = next(in)
			continue
		case OpOr32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) | uint32(in.imm))
			in = next(in)
			continue
		case OpOr32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) | uint32(r[in.src]))
			in = next(in)
			continue
		case OpAnd32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) & uint32(in.imm))
			in = next(in)
			continue
		case OpAnd32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) & uint32(r[in.src]))
			in = next(in)
			continue
		case OpLsh32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) << (uint32(in.imm) & 31))
			in = next(in)
			continue
		case OpLsh32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) << (uint32(r[in.src]) & 31))
			in = next(in)
			continue
		case OpRsh32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) >> (uint32(in.imm) & 31))
			in = next(in)
			continue
		case OpRsh32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) >> (uint32(r[in.src]) & 31))
			in = next(in)
			continue
		case OpXor32Imm:
			r[in.dst] = uint64(uint32(r[in.dst]) ^ uint32(in.imm))
			in = next(in)
			continue
		case OpXor32Reg:
			r[in.dst] = uint64(uint32(r[in.dst]) ^ uint32(r[in.src]))
			in = next(in)
			continue
		case OpMov32Imm:
			r[in.dst] = uint64(uint32(in.imm))
			in = next(in)
			continue
		case OpMov32Reg:
			r[in.dst] = uint64(uint32(r[in.src]))
			in = next(in)
			continue

		case opNop:
			in = next(in)
			continue

		// 64-bit immediate load: the second slot is skipped.
		case OpLddw:
			r[in.dst] = uint64(in.imm)
			in = (*insn)(unsafe.Add(unsafe.Pointer(in), 2*unsafe.Sizeof(insn{})))
			continue

		// Loads.
		case OpLdxw:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case OpLdxh:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case OpLdxb:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case OpLdxdw:
			v, ok := mem.Read64(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = v
			in = next(in)
			continue
		case OpLdxsw:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int32(v)))
			in = next(in)
			continue
		case OpLdxsh:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int16(v)))
			in = next(in)
			continue
		case OpLdxsb:
			v, ok := mem.Read8(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(int64(int8(v)))
			in = next(in)
			continue

		// Stores of an immediate.
		case OpStw:
			if !mem.Write32(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpSth:
			if !mem.Write16(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpStb:
			if !mem.Write8(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpStdw:
			if !mem.Write64(r[in.dst]+uint64(in.off), uint64(in.imm)) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue

		// Stores of a register.
		case OpStxw:
			if !mem.Write32(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpStxh:
			if !mem.Write16(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpStxb:
			if !mem.Write8(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue
		case OpStxdw:
			if !mem.Write64(r[in.dst]+uint64(in.off), r[in.src]) {
				return 0, m.memFault(in)
			}
			in = next(in)
			continue

		case OpAtomicW, OpAtomicDW:
			// Calls below recompute in from its index afterwards, so that in
			// is not live across a call: otherwise the compiler spills it on
			// every dispatch, calls or not.
			pc := index(m.base, in)
			if err := m.atomic(pc); err != nil {
				return 0, err
			}
			in = at(m.base, pc+1)
			continue

		// Jumps, 64-bit compare.
		case OpJa:
			goto jump
		case OpJeqImm:
			if r[in.dst] == uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJeqReg:
			if r[in.dst] == r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJgtImm:
			if r[in.dst] > uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJgtReg:
			if r[in.dst] > r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJgeImm:
			if r[in.dst] >= uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJgeReg:
			if r[in.dst] >= r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJsetImm:
			if r[in.dst]&uint64(in.imm) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case OpJsetReg:
			if r[in.dst]&r[in.src] != 0 {
				goto jump
			}
			in = next(in)
			continue
		case OpJneImm:
			if r[in.dst] != uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJneReg:
			if r[in.dst] != r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgtImm:
			if int64(r[in.dst]) > in.imm {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgtReg:
			if int64(r[in.dst]) > int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgeImm:
			if int64(r[in.dst]) >= in.imm {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgeReg:
			if int64(r[in.dst]) >= int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJltImm:
			if r[in.dst] < uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJltReg:
			if r[in.dst] < r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJleImm:
			if r[in.dst] <= uint64(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJleReg:
			if r[in.dst] <= r[in.src] {
				goto jump
			}
			in = next(in)
			continue
		case OpJsltImm:
			if int64(r[in.dst]) < in.imm {
				goto jump
			}
			in = next(in)
			continue
		case OpJsltReg:
			if int64(r[in.dst]) < int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsleImm:
			if int64(r[in.dst]) <= in.imm {
				goto jump
			}
			in = next(in)
			continue
		case OpJsleReg:
			if int64(r[in.dst]) <= int64(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue

		// Jumps, 32-bit compare.
		case OpJeq32Imm:
			if uint32(r[in.dst]) == uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJeq32Reg:
			if uint32(r[in.dst]) == uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJgt32Imm:
			if uint32(r[in.dst]) > uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJgt32Reg:
			if uint32(r[in.dst]) > uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJge32Imm:
			if uint32(r[in.dst]) >= uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJge32Reg:
			if uint32(r[in.dst]) >= uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJset32Imm:
			if uint32(r[in.dst])&uint32(in.imm) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case OpJset32Reg:
			if uint32(r[in.dst])&uint32(r[in.src]) != 0 {
				goto jump
			}
			in = next(in)
			continue
		case OpJne32Imm:
			if uint32(r[in.dst]) != uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJne32Reg:
			if uint32(r[in.dst]) != uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgt32Imm:
			if int32(r[in.dst]) > int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsgt32Reg:
			if int32(r[in.dst]) > int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsge32Imm:
			if int32(r[in.dst]) >= int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsge32Reg:
			if int32(r[in.dst]) >= int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJlt32Imm:
			if uint32(r[in.dst]) < uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJlt32Reg:
			if uint32(r[in.dst]) < uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJle32Imm:
			if uint32(r[in.dst]) <= uint32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJle32Reg:
			if uint32(r[in.dst]) <= uint32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJslt32Imm:
			if int32(r[in.dst]) < int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJslt32Reg:
			if int32(r[in.dst]) < int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsle32Imm:
			if int32(r[in.dst]) <= int32(in.imm) {
				goto jump
			}
			in = next(in)
			continue
		case OpJsle32Reg:
			if int32(r[in.dst]) <= int32(r[in.src]) {
				goto jump
			}
			in = next(in)
			continue

		// Calls and exit.
		case opCallFunc:
			pc := index(m.base, in)
			v, err := m.callFunc(pc)
			if err != nil {
				return 0, err
			}
			r[0] = v
			in = at(m.base, pc+1)
			continue
		case opCallLocal, OpCallx:
			t, err := m.callLocal(index(m.base, in))
			if err != nil {
				return 0, err
			}
			in = at(m.base, t)
			continue
		case OpExit:
			t, err := m.exit(index(m.base, in))
			if err != nil {
				return 0, err
			}
			if t < 0 {
				return r[0], nil
			}
			in = at(m.base, t)
			continue

		// Fused increment and loop test (see fuse).
		case opAddJltImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v < uint64(in.imm>>32) {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJltReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v < r[in.src] {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJgeRegJltImm:
			// clang's for (i = 0; i < len && i < MAX; i++): the add, the
			// test against len leaving the loop, the back edge.
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v >= r[in.src] {
				goto fusedJump
			} else if v < uint64(in.imm>>32) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opAddJleImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v <= uint64(in.imm>>32) {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJleReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v <= r[in.src] {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJneImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v != uint64(in.imm>>32) {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJneReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if v != r[in.src] {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJsltImm:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if int64(v) < in.imm>>32 {
				goto pairJump
			}
			in = at2(in)
			continue
		case opAddJsltReg:
			v := r[in.dst] + uint64(int32(in.imm))
			r[in.dst] = v
			if int64(v) < int64(r[in.src]) {
				goto pairJump
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
		case opLdxhSwap16:
			v, ok := mem.Read16(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(bits.ReverseBytes16(uint16(v)))
			in = at2(in)
			continue
		case opLdxwSwap32:
			v, ok := mem.Read32(r[in.src] + uint64(in.off))
			if !ok {
				return 0, m.memFault(in)
			}
			r[in.dst] = uint64(bits.ReverseBytes32(uint32(v)))
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
		case opAddImmJa:
			r[in.dst] += uint64(in.imm)
			goto pairJump
		case opSubImmJa:
			r[in.dst] -= uint64(in.imm)
			goto pairJump
		case opMulImmJa:
			r[in.dst] *= uint64(in.imm)
			goto pairJump
		case opAndImmJa:
			r[in.dst] &= uint64(in.imm)
			goto pairJump
		case opOrImmJa:
			r[in.dst] |= uint64(in.imm)
			goto pairJump
		case opXorImmJa:
			r[in.dst] ^= uint64(in.imm)
			goto pairJump
		case opMovImmJa:
			r[in.dst] = uint64(in.imm)
			goto pairJump

		// Fused pairs of conditional jumps (see fuse): the first jumps
		// from this slot, the second from the next.
		case opJeqJeqImm:
			if v := r[in.dst]; v == uint64(int32(in.imm)) {
				goto jump
			} else if v == uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opJneJneImm:
			if v := r[in.dst]; v != uint64(int32(in.imm)) {
				goto jump
			} else if v != uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opJgtJgtImm:
			if v := r[in.dst]; v > uint64(int32(in.imm)) {
				goto jump
			} else if v > uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opJgeJgeImm:
			if v := r[in.dst]; v >= uint64(int32(in.imm)) {
				goto jump
			} else if v >= uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		// Fused triples of jumps: the third slot holds its immediate in
		// the low 32 bits, whether it is a plain jump or the first of a
		// fused pair or triple.
		case opJeq3Imm:
			if v := r[in.dst]; v == uint64(int32(in.imm)) {
				goto jump
			} else if v == uint64(in.imm>>32) {
				goto fusedJump
			} else if v == uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJne3Imm:
			if v := r[in.dst]; v != uint64(int32(in.imm)) {
				goto jump
			} else if v != uint64(in.imm>>32) {
				goto fusedJump
			} else if v != uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJgt3Imm:
			if v := r[in.dst]; v > uint64(int32(in.imm)) {
				goto jump
			} else if v > uint64(in.imm>>32) {
				goto fusedJump
			} else if v > uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJge3Imm:
			if v := r[in.dst]; v >= uint64(int32(in.imm)) {
				goto jump
			} else if v >= uint64(in.imm>>32) {
				goto fusedJump
			} else if v >= uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJlt3Imm:
			if v := r[in.dst]; v < uint64(int32(in.imm)) {
				goto jump
			} else if v < uint64(in.imm>>32) {
				goto fusedJump
			} else if v < uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJle3Imm:
			if v := r[in.dst]; v <= uint64(int32(in.imm)) {
				goto jump
			} else if v <= uint64(in.imm>>32) {
				goto fusedJump
			} else if v <= uint64(int32(at2(in).imm)) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opJltJltImm:
			if v := r[in.dst]; v < uint64(int32(in.imm)) {
				goto jump
			} else if v < uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		case opJleJleImm:
			if v := r[in.dst]; v <= uint64(int32(in.imm)) {
				goto jump
			} else if v <= uint64(in.imm>>32) {
				goto fusedJump
			}
			in = at2(in)
			continue
		// Fused bit tests (see fuseTriple): the jump is the third slot.
		case opMovRshJeqImm:
			v := r[in.src] >> (uint64(in.imm) & 63)
			r[in.dst] = v
			if v == uint64(in.imm>>32) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opMovRshJneImm:
			v := r[in.src] >> (uint64(in.imm) & 63)
			r[in.dst] = v
			if v != uint64(in.imm>>32) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opMovAndJeqImm:
			v := r[in.src] & uint64(int32(in.imm))
			r[in.dst] = v
			if v == uint64(in.imm>>32) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opMovAndJneImm:
			v := r[in.src] & uint64(int32(in.imm))
			r[in.dst] = v
			if v != uint64(in.imm>>32) {
				goto tripleJump
			}
			in = at3(in)
			continue
		case opMov32AddAnd:
			// The range test of a byte, (u8)(c - 'a') < 26, as clang
			// computes it in 32 bits.
			r[in.dst] = uint64((uint32(r[in.src]) + uint32(in.imm)) & uint32(in.imm>>32))
			in = at3(in)
			continue
		case opMovAddImmOther:
			r[in.dst] = r[in.src]
			r[in.x] += uint64(in.imm)
			in = at2(in)
			continue

		case OpDivImm, OpDivReg, OpModImm, OpModReg, OpDiv32Imm, OpDiv32Reg, OpMod32Imm, OpMod32Reg,
			opSdiv64Imm, opSdiv64Reg, opSmod64Imm, opSmod64Reg,
			opSdiv32Imm, opSdiv32Reg, opSmod32Imm, opSmod32Reg,
			opMovsx64, opMovsx32, opTrunc16, opTrunc32, opSwap16, opSwap32, opSwap64,
			OpNeg, OpNeg32, OpArshReg, OpArsh32Imm, OpArsh32Reg:
			// The rarer operations live in rareALU, which keeps exec
			// small enough for the compiler to inline the memory
			// accessors into it (see exec). Listing them here also keeps
			// the jump table complete up to 0xff, so dispatch needs no
			// range check.
			rareALU(in, r)
			in = next(in)
			continue
		case opInvalid:
			// Listed so that the jump table starts at 0 and dispatch
			// needs no range check.
			return 0, m.invalid(in)
		default:
			return 0, m.invalid(in)
		}

	jump:
		// Charging the finished straight-line run at each taken jump
		// makes the budget an exact count of executed instruction slots
		// (lddw counts two); with the budget kept as a limit address (see
		// arm) that is one comparison and one addition per jump. A jump's
		// off is its distance in bytes from the next slot (see validate),
		// which is also how far the jump moves the limit.
		if uintptr(unsafe.Pointer(in)) < m.limit {
			d := int(in.off)
			m.limit += uintptr(d)
			in = (*insn)(unsafe.Add(unsafe.Pointer(in), d+int(unsafe.Sizeof(insn{}))))
			continue
		}
		goto overLimit

	fusedJump:
		// The jump is the second slot of the pair, which keeps its own
		// instruction: jump's work, done from the first slot.
		if uintptr(unsafe.Pointer(in))+unsafe.Sizeof(insn{}) < m.limit {
			d := int(next(in).off)
			m.limit += uintptr(d)
			in = (*insn)(unsafe.Add(unsafe.Pointer(in), d+2*int(unsafe.Sizeof(insn{}))))
			continue
		}
		in = next(in)
		goto overLimit

	pairJump:
		// The jump is the second slot of a pair whose first slot holds
		// the jump's distance from the slot after the pair (see validate):
		// jump's work, done from the first slot.
		if uintptr(unsafe.Pointer(in))+unsafe.Sizeof(insn{}) < m.limit {
			d := int(in.off)
			m.limit += uintptr(d)
			in = (*insn)(unsafe.Add(unsafe.Pointer(in), d+2*int(unsafe.Sizeof(insn{}))))
			continue
		}
		in = next(in)
		goto overLimit

	tripleJump:
		// The jump is the third slot of the triple.
		in = at2(in)
		goto jump

	overLimit:
		{
			pc := index(m.base, in)
			if err := m.rearm(pc); err != nil {
				return 0, err
			}
			in = at(m.base, pc)
			goto jump
		}
	}
}

// callLocal executes the call (a bpf-to-bpf call or callx) at index pc and
// returns the index to continue at: the callee's first instruction, or the
// next one when callx called a helper.
func (m *Machine) callLocal(pc int) (int, error) {
	in, r := at(m.base, pc), &m.regs
	target := int(in.imm)
	if in.op == OpCallx {
		t, err := m.callx(pc, r[in.dst], r)
		if err != nil {
			return 0, err
		}
		if t < 0 {
			return pc + 1, nil // a helper, already called
		}
		target = t
	}
	if m.depth+1 >= MaxFrames {
		return 0, &RunError{Insn: pc, Err: fmt.Errorf("%w: more than %d frames", ErrCallDepth, MaxFrames)}
	}
	if err := m.transfer(pc, target); err != nil {
		return 0, err
	}
	m.frames[m.depth] = frame{ret: pc, r6: r[6], r7: r[7], r8: r[8], r9: r[9]}
	m.depth++
	if m.depth >= m.deep {
		m.mapFrames(m.depth + 1)
	}
	r[10] = StackTop(m.depth)
	return target, nil
}

// exit executes the exit at index pc and returns the index after the call
// it returns from, or -1 at the end of the run, where it leaves the budget
// left in m.budget.
func (m *Machine) exit(pc int) (int, error) {
	if m.depth == 0 {
		if m.budget = m.left(pc); m.budget < 0 {
			return 0, &RunError{Insn: pc, Err: ErrBudget}
		}
		return -1, nil
	}
	f, r := &m.frames[m.depth-1], &m.regs
	if err := m.transfer(pc, f.ret+1); err != nil {
		return 0, err
	}
	m.depth--
	r[6], r[7], r[8], r[9] = f.r6, f.r7, f.r8, f.r9
	r[10] = StackTop(m.depth)
	return f.ret + 1, nil
}

// limitCap bounds the part of the budget that arm puts into the limit
// address, so that the address arithmetic cannot overflow; the rest waits
// in reserve. A variable so that tests can make the reserve matter.
var limitCap int64 = 1 << 40

// arm sets the limit for a straight-line run starting at index s with left
// instruction slots of budget: a control transfer at index pc overruns the
// budget when the run s..pc is longer than left, that is when pc >= s+left,
// so the limit is the address of slot s+left. A taken jump from pc to t
// leaves left-(pc-s+1) for the run at t, whose limit is then t+left-(pc-s+1)
// = limit+t-pc-1: moving the limit by the jump's distance keeps it, without
// tracking where the run started. Not inlined: exec has no room (see exec).
//
//go:noinline
func (m *Machine) arm(s int, left int64) {
	take := min(left, limitCap)
	m.reserve = left - take
	m.limit = uintptr(m.base) + uintptr(s+int(take))*unsafe.Sizeof(insn{})
}

// left is the budget left after a straight-line run that ends with the
// slot at index pc; negative when the run overran it.
func (m *Machine) left(pc int) int64 {
	return m.reserve + int64(int(m.limit-uintptr(m.base))/int(unsafe.Sizeof(insn{}))-pc-1)
}

// rearm is the slow path of a control transfer at index pc at or past the
// limit: ErrBudget if the run overran the budget, otherwise (the budget was
// larger than limitCap) the next part of the reserve goes into the limit.
//
//go:noinline
func (m *Machine) rearm(pc int) error {
	left := m.left(pc)
	if left < 0 {
		m.budget = left
		return &RunError{Insn: pc, Err: ErrBudget}
	}
	m.arm(pc+1, left)
	return nil
}

// transfer charges the straight-line run ending with the slot at index pc,
// which transfers control to index t (a call or a return).
func (m *Machine) transfer(pc, t int) error {
	if uintptr(unsafe.Pointer(at(m.base, pc))) >= m.limit {
		if err := m.rearm(pc); err != nil {
			return err
		}
	}
	m.limit += uintptr(t-pc-1) * unsafe.Sizeof(insn{})
	return nil
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

// invalid is the error of executing the slot in, which holds no
// instruction; validation makes it unreachable.
func (m *Machine) invalid(in *insn) error {
	if in.op == opInvalid {
		return &RunError{Insn: index(m.base, in), Err: fmt.Errorf("execution reached the second slot of an lddw")}
	}
	return &RunError{Insn: index(m.base, in), Err: fmt.Errorf("invalid opcode %#02x", uint8(in.op))}
}

// at3 is the instruction after a fused triple.
func at3(in *insn) *insn {
	return (*insn)(unsafe.Add(unsafe.Pointer(in), 3*unsafe.Sizeof(insn{})))
}

// index is the position of in within the instructions starting at base.
func index(base unsafe.Pointer, in *insn) int {
	return int((uintptr(unsafe.Pointer(in)) - uintptr(base)) / unsafe.Sizeof(insn{}))
}

// at is the instruction at index i; the validator has checked i.
func at(base unsafe.Pointer, i int) *insn {
	return (*insn)(unsafe.Add(base, uintptr(i)*unsafe.Sizeof(insn{})))
}

// rareALU executes the ALU operations that clang seldom emits in loops or
// that take long anyway: division and modulo, sign-extending moves, byte swaps, negation,
// arithmetic shifts other than by an immediate in 64 bits.
func rareALU(in *insn, r *[256]uint64) {
	switch in.op {
	// Unsigned division and modulo: a division takes longer than the call.
	case OpDivImm: // never by zero (see validate)
		r[in.dst] /= uint64(in.imm)
	case OpDivReg:
		if s := r[in.src]; s == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] /= s
		}
	case OpModImm: // never by zero (see validate)
		r[in.dst] %= uint64(in.imm)
	case OpModReg:
		if s := r[in.src]; s != 0 {
			r[in.dst] %= s
		}
	case OpDiv32Imm: // never by zero (see validate)
		r[in.dst] = uint64(uint32(r[in.dst]) / uint32(in.imm))
	case OpDiv32Reg:
		if s := uint32(r[in.src]); s == 0 {
			r[in.dst] = 0
		} else {
			r[in.dst] = uint64(uint32(r[in.dst]) / s)
		}
	case OpMod32Imm: // never by zero (see validate)
		r[in.dst] = uint64(uint32(r[in.dst]) % uint32(in.imm))
	case OpMod32Reg:
		d := uint32(r[in.dst])
		if s := uint32(r[in.src]); s != 0 {
			d %= s
		}
		r[in.dst] = uint64(d)
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
	case OpNeg:
		r[in.dst] = -r[in.dst]
	case OpNeg32:
		r[in.dst] = uint64(-uint32(r[in.dst]))
	case OpArshReg:
		r[in.dst] = uint64(int64(r[in.dst]) >> (r[in.src] & 63))
	case OpArsh32Imm:
		r[in.dst] = uint64(uint32(int32(r[in.dst]) >> (uint32(in.imm) & 31)))
	case OpArsh32Reg:
		r[in.dst] = uint64(uint32(int32(r[in.dst]) >> (uint32(r[in.src]) & 31)))
	}
}

// memFault is the error of the load or store in that failed its bounds
// check. It recomputes address and size from the instruction, so that each
// access in exec needs only a call on its cold path.
func (m *Machine) memFault(in *insn) error {
	r := &m.regs
	addr, size, write := r[in.src]+uint64(in.off), uint64(0), false
	switch in.op {
	case opLdxbAdd, opLdxbXor:
		size = 1
	case opLdxhAdd, opLdxhXor, opLdxhSwap16:
		size = 2
	case opLdxwAdd, opLdxwXor, opLdxwSwap32:
		size = 4
	case opLdxdwAdd, opLdxdwXor:
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
