package bridge

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadObject loads mutated objects in process: parsing, turning ubpf/
// programs into the runtime's form, validating and running them must give
// errors, never a panic or a hang.
func FuzzLoadObject(f *testing.F) {
	seeds, _ := filepath.Glob("../../internal/skeltest/*/*_bpfel.o")
	seeds = append(seeds, "../../examples/latency/latency_bpfel.o")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := LoadSpec(data)
		if err != nil {
			return
		}
		// Maps may legitimately ask for up to a GiB each; allocating that
		// is slow, not wrong, and would trip the fuzzer's 10 s hang limit.
		var total uint64
		for _, m := range spec.Maps {
			total += uint64(m.KeySize+m.ValueSize) * uint64(m.MaxEntries)
		}
		if total > 64<<20 {
			return
		}
		set, err := Load(spec, nil, &LoadOptions{InProcess: true, Output: io.Discard, Budget: 1 << 16})
		if err != nil {
			// Host functions are unbound here; load the programs that
			// need none, one at a time.
			for name, p := range spec.Programs {
				if !IsUserProgram(p) {
					continue
				}
				s, err := Load(spec, nil, &LoadOptions{InProcess: true, Output: io.Discard, Budget: 1 << 16, Programs: []string{name}})
				if err != nil {
					continue
				}
				runAll(s)
				s.Close()
			}
			return
		}
		runAll(set)
		set.Close()
	})
}

func runAll(s *Set) {
	up := s.userPrograms()
	if up == nil {
		return
	}
	for _, p := range up.progs {
		p.Run(make([]byte, 64))
	}
}
