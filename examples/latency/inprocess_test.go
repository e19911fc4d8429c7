package main

import (
	"strings"
	"testing"
)

// TestLoadInProcess: the skeleton loads without privileges, every map in
// process; without a Host, Load fails naming the host function the
// user-space program calls.
func TestLoadInProcess(t *testing.T) {
	if _, err := LoadLatency(&LatencyLoadOptions{InProcess: true}); err == nil || !strings.Contains(err.Error(), "host_metric") {
		t.Fatalf("Load without Host: %v, want an error naming host_metric", err)
	}
	objs, err := LoadLatency(&LatencyLoadOptions{InProcess: true, Host: &metrics{values: map[string]uint64{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Collection() != nil {
		t.Error("an object loaded in process has a kernel collection")
	}
}
