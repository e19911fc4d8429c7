package bridge

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// normalizeKconfig lets .kconfig externs be declared with typedef'd
// integers (extern __u32 LINUX_KERNEL_VERSION __kconfig;), as libbpf
// accepts: cilium/ebpf fills in LINUX_KERNEL_VERSION and
// LINUX_HAS_SYSCALL_WRAPPER only when their BTF type is a plain integer.
//
// cilium/ebpf keeps the .kconfig map spec out of CollectionSpec.Maps: the
// programs' instructions point at it, and its value is the object's
// .kconfig Datasec, shared by every copy of the spec. So the Datasec is
// changed in place: each variable whose type is a typedef of an integer is
// replaced by a new variable of the integer itself. The old variables are
// not modified, the layout is the same, and doing it twice changes
// nothing.
func normalizeKconfig(spec *ebpf.CollectionSpec) {
	if spec == nil || spec.Types == nil {
		return
	}
	var ds *btf.Datasec
	if err := spec.Types.TypeByName(".kconfig", &ds); err != nil {
		return
	}
	for i, vsi := range ds.Vars {
		v, ok := vsi.Type.(*btf.Var)
		if !ok {
			continue
		}
		if _, isTypedef := v.Type.(*btf.Typedef); !isTypedef {
			continue
		}
		if n, ok := btf.UnderlyingType(v.Type).(*btf.Int); ok {
			nv := *v
			nv.Type = n
			ds.Vars[i].Type = &nv
		}
	}
}
