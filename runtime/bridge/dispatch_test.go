package bridge

import "testing"

// BenchmarkDispatch is the cost of handing one record to its stream's Go
// callback, Serve's work per record outside the readers and the hook.
func BenchmarkDispatch(b *testing.B) {
	t := &Tool{}
	n := 0
	st := &stream{name: "events", deliver: func([]byte) { n++ }}
	it := item{st: st, raw: make([]byte, 64)}
	b.ReportAllocs()
	for b.Loop() {
		t.dispatch(it)
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
	it := item{st: st, raw: make([]byte, 64)}
	if n := testing.AllocsPerRun(100, func() { tool.dispatch(it) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
	tool.fail(&ExitError{Code: 3})
	if tool.failed() {
		t.Error("a stop with an exit code counts as a failure")
	}
}
