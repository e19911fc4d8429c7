package bridge

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
)

// IsUserProgram reports whether a program runs in user space (section
// "ubpf" or "ubpf/<hook>") rather than in the kernel.
func IsUserProgram(p *ebpf.ProgramSpec) bool {
	return p.SectionName == "ubpf" || strings.HasPrefix(p.SectionName, "ubpf/")
}

// RemoveUserPrograms deletes the user-space programs from spec, so that
// loading it creates only what kernel programs need.
func RemoveUserPrograms(spec *ebpf.CollectionSpec) {
	for name, p := range spec.Programs {
		if IsUserProgram(p) {
			delete(spec.Programs, name)
		}
	}
}

// NewCollection loads spec into the kernel like ebpf.NewCollectionWithOptions
// and explains failures whose errno alone says little.
func NewCollection(spec *ebpf.CollectionSpec, opts *ebpf.CollectionOptions) (*ebpf.Collection, error) {
	var o ebpf.CollectionOptions
	if opts != nil {
		o = *opts
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, o)
	if err != nil {
		return nil, explainLoad(spec, err)
	}
	return coll, nil
}

// explainLoad names what the kernel refused when it refuses trampolines or
// pinned maps lack a path.
func explainLoad(spec *ebpf.CollectionSpec, err error) error {
	var names []string
	for name, p := range spec.Programs {
		if p.Type == ebpf.Tracing && (p.AttachType == ebpf.AttachTraceFEntry || p.AttachType == ebpf.AttachTraceFExit || p.AttachType == ebpf.AttachModifyReturn) {
			if strings.Contains(err.Error(), name) {
				names = append(names, name)
			}
		}
	}
	if len(names) > 0 && (errors.Is(err, os.ErrPermission) || errors.Is(err, ebpf.ErrNotSupported)) {
		return fmt.Errorf("%w (the kernel refused to load fentry/fexit program %s: this kernel does not allow BPF trampolines)", err, strings.Join(names, ", "))
	}
	for _, m := range spec.Maps {
		if m.Pinning == ebpf.PinByName && strings.Contains(err.Error(), "pin") {
			return fmt.Errorf("%w (map %s is pinned by name: set CollectionOptions.Maps.PinPath to a directory in a mounted bpffs)", err, m.Name)
		}
	}
	return err
}
