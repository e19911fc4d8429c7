package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestReadsize reads a file in chunks of 700 bytes ten times and requires
// the report (the object's ubpf/ program) to show ten reads in the
// 512 -> 1023 slot and the bytes they returned.
func TestReadsize(t *testing.T) {
	testenv.Kernel(t)
	const chunk, reads = 700, 10
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, make([]byte, chunk*reads+1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
		return run(ctx, out, options{pid: os.Getpid(), minBytes: 512, interval: time.Hour}, ready)
	})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, chunk)
	for range reads {
		if n, err := f.Read(buf); n != chunk || err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
	}
	f.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	slot := regexp.MustCompile(`(?m)^\s*512 -> 1023\s*: (\d+)\s`).FindStringSubmatch(text)
	if slot == nil || slot[1] != "10" {
		t.Errorf("the 512 -> 1023 slot: %q, want 10 reads", slot)
	}
	if !strings.Contains(text, "10 reads, 7000 bytes, mean 700 bytes") {
		t.Error("no summary of the ten reads")
	}
}
