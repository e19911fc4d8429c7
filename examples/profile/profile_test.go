package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
)

//go:noinline
func burnCPU(d time.Duration) int {
	x := 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		for i := range 1 << 16 {
			x += i ^ (x >> 3)
		}
	}
	return x
}

// sampling runs f while profile samples this process at hz.
func sampling(t *testing.T, hz uint64, f func()) ([]sample, *users) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	type result struct {
		all []sample
		us  *users
		err error
	}
	done := make(chan result, 1)
	go func() {
		all, us, err := profile(ctx, options{hz: hz, pid: os.Getpid()}, func() { close(ready) })
		done <- result{all, us, err}
	}()
	select {
	case <-ready:
		f()
	case r := <-done:
		cancel()
		t.Fatal(r.err)
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.all, r.us
}

// TestProfile burns CPU in burnCPU for half a second while sampling this
// process at 499 Hz: samples of this process are counted, and the user
// stacks of some hold burnCPU (named by the Go runtime, as go test's
// binaries have no ELF symbols).
func TestProfile(t *testing.T) {
	testenv.Kernel(t)
	all, _ := sampling(t, 499, func() { burnCPU(500 * time.Millisecond) })
	var total, inBurn uint64
	for _, s := range all {
		if s.pid != uint32(os.Getpid()) {
			t.Errorf("a sample of pid %d, only %d's were asked for", s.pid, os.Getpid())
		}
		total += s.n
		for _, pc := range s.user {
			if fn := runtime.FuncForPC(uintptr(pc)); fn != nil && strings.HasSuffix(fn.Name(), ".burnCPU") {
				inBurn += s.n
				break
			}
		}
	}
	t.Logf("%d samples of pid %d in %d stacks, %d in burnCPU", total, os.Getpid(), len(all), inBurn)
	if total == 0 {
		t.Fatal("no sample of this process")
	}
	if inBurn == 0 {
		t.Error("no sampled user stack goes through burnCPU")
	}
}

// TestRun prints the stacks of this process with its name and pid, most
// frequent first.
func TestRun(t *testing.T) {
	testenv.Kernel(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, &out, options{hz: 499, pid: os.Getpid(), top: 3}, func() {
			burnCPU(300 * time.Millisecond)
			cancel()
		})
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	if !strings.HasPrefix(text, "# ") || !strings.Contains(text, " samples at 499 Hz per CPU") {
		t.Error("no header line")
	}
	if !strings.Contains(text, fmt.Sprintf("[%d] ", os.Getpid())) {
		t.Error("no stack of this process printed")
	}
	if _, _, err := profile(context.Background(), options{}, nil); err == nil {
		t.Error("-hz 0 accepted")
	}
}
