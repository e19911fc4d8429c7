package bridge

import "testing"

// BenchmarkDispatch is the cost of handing one record to its stream's Go
// callback, Serve's work per record outside the readers and the hook.
func BenchmarkDispatch(b *testing.B) {
	t := &Tool{}
	n := 0
	st := &stream{name: "events", deliver: func([]byte) { n++ }}
	raw := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		t.record(st, raw, 0, 0)
	}
	if n == 0 {
		b.Fatal("no record delivered")
	}
}

// TestDispatchAllocatesNothing: handing a record to its callback
// allocates nothing (asking whether the tool failed once allocated).
func TestDispatchAllocatesNothing(t *testing.T) {
	tool := &Tool{stopCh: make(chan struct{})}
	st := &stream{name: "events", deliver: func([]byte) {}}
	raw := make([]byte, 64)
	if n := testing.AllocsPerRun(100, func() { tool.record(st, raw, 0, 0) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
	tool.fail(&ExitError{Code: 3})
	if tool.failed() {
		t.Error("a stop with an exit code counts as a failure")
	}
}

// TestHandleAllocatesNothing: a record decoded for its typed callback
// allocates nothing (each was once a new E on the heap).
func TestHandleAllocatesNothing(t *testing.T) {
	tool := NewTool(nil)
	type event struct{ Seq, Val uint64 }
	var sum uint64
	Handle(tool, &RingBuf[event]{h: mapHandle{name: "events"}}, func(e *event) { sum += e.Val })
	deliver := tool.handlers["events"]
	raw := make([]byte, 16)
	raw[8] = 1
	if n := testing.AllocsPerRun(100, func() { deliver(raw) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
	if sum == 0 {
		t.Error("the callback saw no record")
	}
}
