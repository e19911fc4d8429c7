package gen

import (
	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime/bridge"
)

// progInfo is a kernel program of the skeleton. Its handle is the bridge
// type its section gives it (bridge.KindOf): the attach logic lives once
// in the runtime, and the generated package holds only a field per
// program.
type progInfo struct {
	name  string // C function name
	field string // Go field name in Objects
	spec  *ebpf.ProgramSpec
	kind  bridge.Kind
}
