package bridge

import (
	"io"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestBloomFilter pushes values into a kernel bloom filter and tests them
// and values never pushed.
func TestBloomFilter(t *testing.T) {
	testenv.Kernel(t)
	spec := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{
		"seen": {Name: "seen", Type: ebpf.BloomFilter, ValueSize: 4, MaxEntries: 1024},
	}, Programs: map[string]*ebpf.ProgramSpec{}}
	s, err := Load(spec, nil, &LoadOptions{Output: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := NewBloomFilter[uint64](s, "seen"); err == nil {
		t.Error("an 8-byte Go type for 4-byte values was accepted")
	}
	b, err := NewBloomFilter[uint32](s, "seen")
	if err != nil {
		t.Fatal(err)
	}
	for v := uint32(0); v < 100; v++ {
		if err := b.Push(v * 3); err != nil {
			t.Fatal(err)
		}
	}
	positives := 0
	for v := uint32(0); v < 300; v++ {
		ok, err := b.Contains(v)
		if err != nil {
			t.Fatal(err)
		}
		if v%3 == 0 && !ok {
			t.Errorf("Contains(%d) = false after Push", v)
		}
		if v%3 != 0 && ok {
			positives++
		}
	}
	// 100 values in a filter sized for 1024: false positives are rare.
	if positives > 20 {
		t.Errorf("%d of 200 values never pushed tested present", positives)
	}
	s.Close()
	if err := b.Push(1); err == nil {
		t.Error("Push after Close succeeded")
	}
}
