package testenv

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"testing"
	"time"
)

// NoHang runs f and, when it has not returned within limit, ends the test
// binary with a panic that carries every goroutine's stack: a detector of
// deadlocks, not a measure of time, so limit should be generous. It panics
// from a goroutine of its own, because failing the test would run its
// cleanups, which often wait for what deadlocked.
func NoHang(t testing.TB, what string, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 2)
		msg := fmt.Sprintf("%s: %s has not returned after %v: deadlock?\n\n%s", t.Name(), what, limit, b.String())
		go panic(msg)
		select {}
	}
}
