package gen

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/skelgen/skelgen/btfmin"
)

// Target is one compilation target of a C input: a BPF byte order and, for
// GOARCH targets, the architecture whose kernel headers the program uses.
type Target struct {
	// Clang is the clang target: "bpfel" or "bpfeb".
	Clang string
	// GOARCH is set for architecture targets ("amd64"): the output builds only
	// there and the compiler sees -D__TARGET_ARCH_<Linux arch>.
	GOARCH string
}

// archInfo describes a GOARCH: its byte order (Linux's name for it is
// btfmin.LinuxArch's).
type archInfo struct {
	little bool
}

var goarches = map[string]archInfo{
	"386": {little: true}, "amd64": {little: true}, "arm": {little: true}, "arm64": {little: true},
	"loong64": {little: true}, "mips": {}, "mipsle": {little: true}, "mips64": {}, "mips64le": {little: true},
	"ppc64": {}, "ppc64le": {little: true}, "riscv64": {little: true}, "s390x": {},
}

// ParseTargets parses a -target value: a comma-separated list of bpfel,
// bpfeb, bpf (the host's byte order is not assumed: bpf means bpfel) and
// GOARCH names.
func ParseTargets(s string) ([]Target, error) {
	var out []Target
	seen := map[Target]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		var t Target
		switch name {
		case "bpfel", "bpf":
			t = Target{Clang: "bpfel"}
		case "bpfeb":
			t = Target{Clang: "bpfeb"}
		default:
			info, ok := goarches[name]
			if !ok {
				return nil, fmt.Errorf("unknown target %q (want bpfel, bpfeb or a GOARCH)", name)
			}
			t = Target{Clang: "bpfeb", GOARCH: name}
			if info.little {
				t.Clang = "bpfel"
			}
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no target given")
	}
	return out, nil
}

// Suffix is the file name suffix of the target's outputs: "bpfel" or
// "amd64_bpfel".
func (t Target) Suffix() string {
	if t.GOARCH != "" {
		return t.GOARCH + "_" + t.Clang
	}
	return t.Clang
}

// ByteOrder is the target's byte order.
func (t Target) ByteOrder() binary.ByteOrder {
	if t.Clang == "bpfeb" {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Defines are the extra preprocessor flags of the target.
func (t Target) Defines() []string {
	if t.GOARCH == "" {
		return nil
	}
	return []string{"-D__TARGET_ARCH_" + btfmin.LinuxArch(t.GOARCH)}
}

// headerArches are the Linux architectures of the GOARCH targets, which
// the -header file serves (btfmin.Config.Arches).
func headerArches(targets []Target) []string {
	var out []string
	for _, t := range targets {
		if t.GOARCH != "" {
			out = append(out, btfmin.LinuxArch(t.GOARCH))
		}
	}
	return out
}

// BuildConstraint is the //go:build expression of the target's Go file.
func (t Target) BuildConstraint() string {
	if t.GOARCH != "" {
		return t.GOARCH
	}
	little := t.Clang == "bpfel"
	var arches []string
	for a, info := range goarches {
		if info.little == little {
			arches = append(arches, a)
		}
	}
	if little {
		arches = append(arches, "wasm")
	}
	sort.Strings(arches)
	return strings.Join(arches, " || ")
}

// targetForOrder is the target of a prebuilt object of the given byte order.
func targetForOrder(order binary.ByteOrder) Target {
	if order == binary.BigEndian {
		return Target{Clang: "bpfeb"}
	}
	return Target{Clang: "bpfel"}
}
