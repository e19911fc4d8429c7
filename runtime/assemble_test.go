package runtime

import (
	"encoding/binary"

	"github.com/skelgen/skelgen/asm"
)

// assemble assembles test programs with package asm, through the bytes, so
// the tests run exactly what a decoder would see.
func assemble(src string) ([]Instruction, error) {
	b, err := asm.Assemble(src)
	if err != nil {
		return nil, err
	}
	return DecodeInstructions(b, binary.LittleEndian)
}
