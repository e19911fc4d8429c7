package main

import (
	"strings"
	"testing"
)

// TestLoadInProcess: the skeleton loads without privileges, every map it
// can hold in process, once the maps the tool sizes are sized; unsized, the
// error names the map and the setter, as with the kernel.
func TestLoadInProcess(t *testing.T) {
	if _, err := LoadStackcount(&StackcountLoadOptions{InProcess: true}); err == nil || !strings.Contains(err.Error(), "SetMaxEntries") {
		t.Fatalf("unsized maps in process: %v, want an error naming the setter", err)
	}
	spec, err := LoadStackcountSpec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Maps.Stacks.SetValueSize(16 * 8)
	spec.Maps.Stacks.SetMaxEntries(64)
	spec.Maps.Counts.SetMaxEntries(64)
	objs, err := spec.Load(&StackcountLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if objs.Collection() != nil {
		t.Error("an object loaded in process has a kernel collection")
	}
}
