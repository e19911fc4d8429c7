// Package tooltest runs an example tool inside its test: the tool writes
// to a Buffer while the test makes the activity it traces, then waits for
// the lines it expects.
package tooltest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is an io.Writer safe for a tool writing while the test reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the lines written so far that contain every one of subs.
func (b *Buffer) Lines(subs ...string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// Run starts run (a tool's main loop) in the background, waits until it
// calls ready, and returns its output and a stop function that cancels it
// and returns its error.
func Run(t *testing.T, run func(ctx context.Context, out *Buffer, ready func()) error) (*Buffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &Buffer{}
	readyc := make(chan struct{})
	errc := make(chan error, 1)
	var once sync.Once
	go func() { errc <- run(ctx, out, func() { once.Do(func() { close(readyc) }) }) }()
	select {
	case <-readyc:
	case err := <-errc:
		cancel()
		t.Fatalf("the tool stopped before it was ready: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("the tool was not ready after 30s:\n%s", out.String())
	}
	var stopped bool
	var err error
	stop := func() error {
		if !stopped {
			cancel()
			err = <-errc
			stopped = true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return out, stop
}

// WaitFor waits up to 10 seconds for a line containing every one of subs
// and returns it; it fails the test with the output so far otherwise.
func WaitFor(t *testing.T, out *Buffer, subs ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if l := out.Lines(subs...); len(l) > 0 {
			return l[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no line with %q in the output:\n%s", subs, out.String())
	return ""
}
