package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCurrent: runtime/bridge/basicvars.go is what this command writes.
func TestCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", "runtime", "bridge", "basicvars.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, source()) {
		t.Error("runtime/bridge/basicvars.go is not what internal/basicvars writes: run go generate ./internal/basicvars")
	}
}
