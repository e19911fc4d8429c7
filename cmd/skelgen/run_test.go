package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

func TestRun(t *testing.T) {
	obj := filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/ubpf/ubpf_bpfel.o")
	mem := filepath.Join(t.TempDir(), "mem")
	if err := os.WriteFile(mem, make([]byte, 80), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     []string
		code     int
		stdout   string // regexp
		stderrIn string
	}{
		{[]string{"run", "-mem", mem, "-n", "10", obj, "ubpf/bad_read"}, 0, `^r0 = 0\n[0-9]+ ns/run\n$`, ""},
		{[]string{"run", obj, "ubpf/bad_read"}, 1, `^$`, "invalid read of 4 bytes at context+64"},
		{[]string{"run", "-budget", "1000", obj, "spin"}, 1, `^$`, "instruction budget exhausted"},
		{[]string{"run", obj, "ubpf/nope"}, 1, `^$`, "ubpf/bad_read, ubpf/report, ubpf/spin"},
		{[]string{"run", obj, "ubpf/report"}, 1, `^$`, `calls host function host_now, and nothing implements it`},
		{[]string{"run", obj}, 2, `^$`, "usage"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, nil, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !regexp.MustCompile(tt.stdout).MatchString(stdout.String()) {
				t.Errorf("stdout %q does not match %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderrIn) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderrIn)
			}
		})
	}
}

func TestHeader(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"header"}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "skelgen_print_log2_hist") {
		t.Errorf("exit %d, output %q", code, stdout.String())
	}
}

// TestRunBuffer: skelgen run gives a byte-buffer program the file's bytes
// and their length, as the skeleton's Run([]byte) does; the figure is the
// sum the Go reference in internal/skeltest/bytebuf computes.
func TestRunBuffer(t *testing.T) {
	obj := filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/bytebuf/bytebuf_bpfel.o")
	mem := filepath.Join(t.TempDir(), "mem")
	data := []byte("0123456789abcdefXYZ") // two words and three bytes
	if err := os.WriteFile(mem, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var want uint64
	for i := 0; i+8 <= 16; i += 8 {
		want += binary.LittleEndian.Uint64(data[i:])
	}
	want += uint64('X') + uint64('Y') + uint64('Z')
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "-mem", mem, obj, "ubpf/checksum"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := stdout.String(); got != fmt.Sprintf("r0 = %d\n", want) {
		t.Errorf("stdout %q, want r0 = %d", got, want)
	}
}
