package gen

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// FuzzReadObject feeds mutated objects to the reader, the DWARF stripper
// and the skeleton writer: malformed input must give an error, never a panic or a hang.
func FuzzReadObject(f *testing.F) {
	root := testenv.ModuleRoot(f)
	objs, _ := filepath.Glob(filepath.Join(root, "internal/skeltest/*/*_bpfel.o"))
	// Objects with DWARF, for the stripper.
	withDWARF, _ := filepath.Glob(filepath.Join(root, "gen/testdata/types/*.o"))
	objs = append(objs, withDWARF...)
	for _, o := range objs {
		data, err := os.ReadFile(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		StripDWARF("fuzz.o", data)
		obj, err := ReadObject("fuzz.o", data)
		if err != nil {
			return
		}
		// The verbatim parts must give what formatting the whole file
		// gives, whatever names and sections the object has.
		cfg := SkeletonConfig{Package: "p", Stem: "fuzz", ObjectFile: "fuzz.o", Target: Target{Clang: "bpfel"}}
		fast, _, fastErr := Skeleton(obj, cfg)
		slow, _, slowErr := writeSkeleton(obj, cfg, false)
		if (fastErr == nil) != (slowErr == nil) || !bytes.Equal(fast, slow) {
			t.Fatalf("verbatim output differs from go/format's (errors %v, %v):\n%s", fastErr, slowErr, firstDiff(slow, fast))
		}
	})
}

// FuzzStripDWARF feeds mutated objects with DWARF to the stripper: an
// error or an object debug/elf reads, never a panic.
func FuzzStripDWARF(f *testing.F) {
	root := testenv.ModuleRoot(f)
	objs, _ := filepath.Glob(filepath.Join(root, "gen/testdata/types/*.o"))
	for _, o := range objs {
		data, err := os.ReadFile(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := StripDWARF("fuzz.o", data)
		if err != nil {
			return
		}
		if ef, err := elf.NewFile(bytes.NewReader(out)); err != nil {
			t.Fatalf("stripped object unreadable: %v", err)
		} else {
			ef.Close()
		}
	})
}
