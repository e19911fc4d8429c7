package main

import "testing"

// TestLoadInProcess: the skeleton loads without privileges, every map in
// process.
func TestLoadInProcess(t *testing.T) {
	objs, err := LoadExecsnoop(&ExecsnoopLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Collection() != nil {
		t.Error("an object loaded in process has a kernel collection")
	}
}
