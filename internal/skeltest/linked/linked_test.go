//go:build amd64 || arm64 || 386 || arm || mipsle || riscv64 || ppc64le || loong64 || mips64le

package linked

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestLinked runs both sources' programs in the kernel: prog_a (first
// source) calls bump (second source), which adds the second source's own
// static helper's 2 to the map the first defines, while prog_a's own
// static helper still returns 1; prog_b's record is typed by the struct
// only the second source defines.
func TestLinked(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadLinked(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	pkt := make([]byte, 64)
	ret, err := objs.ProgA.Run(&ebpf.RunOptions{Data: pkt})
	if err != nil {
		t.Fatal(err)
	}
	if ret != 2 { // XDP_PASS: the first source's helper returned 1
		t.Errorf("prog_a returned %d, want XDP_PASS", ret)
	}
	if n, err := objs.Counts.Lookup(0); err != nil || n != 2 {
		t.Errorf("counts[0] = %d, %v; want 2 (the second source's helper)", n, err)
	}
	rd, err := objs.Records.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := objs.ProgB.Run(&ebpf.RunOptions{Data: pkt}); err != nil {
		t.Fatal(err)
	}
	rd.SetDeadline(time.Now().Add(5 * time.Second))
	r, err := rd.Read()
	if err != nil {
		t.Fatal(err)
	}
	if r.Tag != 0x5eed || r.Value != 42 {
		t.Errorf("record %+v, want {Tag: 0x5eed, Value: 42}", r)
	}
}

// TestLinkedConstants: a #define both sources give one value is a
// constant; one they give different values (STEP) is left out.
func TestLinkedConstants(t *testing.T) {
	if LinkedSame != "linked" {
		t.Errorf("LinkedSame = %q", LinkedSame)
	}
	src, err := os.ReadFile("linked_bpfel.go")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "LinkedStep") {
		t.Errorf("STEP, 1 in one source and 2 in the other, became a constant")
	}
}
