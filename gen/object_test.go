package gen

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

func readSkeltestObject(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest", name, name+"_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// renameSection renames a section by editing the section-name string
// table in place (same length), making an object without that section.
func renameSection(t *testing.T, obj []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) {
		t.Fatal("names must have equal length")
	}
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(obj)
	// The section may share its name's bytes with its relocation section
	// (".relsocket" holds "socket"): renaming the tail renames both.
	needle := []byte(from + "\x00")
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_STRTAB {
			continue
		}
		tab := out[sec.Offset : sec.Offset+sec.Size]
		if i := bytes.Index(tab, needle); i > 0 && (tab[i-1] == 0 || bytes.HasSuffix(tab[:i], []byte(".rel"))) {
			copy(tab[i:], to)
			return out
		}
	}
	t.Fatalf("no section name %q", from)
	return nil
}

func TestBadObjects(t *testing.T) {
	maps := readSkeltestObject(t, "maps")
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"text", []byte("not an object\n"), []string{"bad.o", "not an ELF file"}},
		{"ELF header only", maps[:16], []string{"bad.o", "truncated"}},
		{"empty", nil, []string{"bad.o", "not an ELF file"}},
		{"host ELF", self[:min(len(self), 1<<16)], []string{"bad.o", "not a BPF object"}},
		{"truncated", maps[:len(maps)/2], []string{"bad.o", "truncated"}},
		{"no BTF", renameSection(t, maps, ".BTF", ".XYZ"), []string{"bad.o", "no .BTF section"}},
		{"garbage BTF", func() []byte {
			b := bytes.Clone(maps)
			// Overwrite the BTF header's magic.
			i := bytes.Index(b, []byte{0x9f, 0xeb, 0x01, 0x00})
			if i < 0 {
				t.Fatal("no BTF magic")
			}
			copy(b[i:], "XXXX")
			return b
		}(), []string{"bad.o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadObject("bad.o", tt.data)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestFailedRunWritesNothing: a generation that fails leaves the output
// directory untouched.
func TestFailedRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "broken.bpf.o")
	if err := os.WriteFile(in, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := Generate(context.Background(), Config{Input: in, OutputDir: out, Package: "p"})
	if err == nil || !strings.Contains(err.Error(), "broken.bpf.o") {
		t.Fatalf("err = %v, want an error naming broken.bpf.o", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory exists after a failed run: %v", err)
	}
}

func TestDuplicateSymbols(t *testing.T) {
	maps := readSkeltestObject(t, "maps")
	// Rename map "recent" to "totals": two global objects named totals.
	dup := bytes.Replace(maps, []byte("\x00recent\x00"), []byte("\x00totals\x00"), -1)
	_, err := ReadObject("dup.o", dup)
	if err == nil || !strings.Contains(err.Error(), "dup.o") || !strings.Contains(err.Error(), "totals") {
		t.Fatalf("err = %v, want a duplicate-name error naming the file and symbol", err)
	}
}

func TestParseTargets(t *testing.T) {
	ts, err := ParseTargets("bpfel,amd64,bpfeb,bpfel")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[1].Defines()[0] != "-D__TARGET_ARCH_x86" || ts[1].BuildConstraint() != "amd64" || ts[0].Defines() != nil {
		t.Errorf("targets = %+v", ts)
	}
	if !strings.Contains(ts[2].BuildConstraint(), "s390x") || strings.Contains(ts[0].BuildConstraint(), "s390x") {
		t.Errorf("byte order constraints wrong: %q / %q", ts[0].BuildConstraint(), ts[2].BuildConstraint())
	}
	if _, err := ParseTargets("vax"); err == nil {
		t.Error("unknown target accepted")
	}
}

func TestSplitGenerate(t *testing.T) {
	words, err := splitGenerate(`go run github.com/skelgen/skelgen/cmd/skelgen -cflags "-O2 -I../include" -type event x.bpf.c`)
	if err != nil {
		t.Fatal(err)
	}
	args, _, ok, err := skelgenArgs(words, "", nil)
	want := []string{"-cflags", "-O2 -I../include", "-type", "event", "x.bpf.c"}
	if !ok || err != nil || strings.Join(args, "|") != strings.Join(want, "|") {
		t.Errorf("args = %q, %v, %v", args, ok, err)
	}
	self := &goModule{path: "github.com/skelgen/skelgen", dir: filepath.FromSlash("/m")}
	for _, line := range []string{"go tool skelgen x.bpf.c", "skelgen x.bpf.c", "go run -mod=mod ./cmd/skelgen x.bpf.c"} {
		words, _ := splitGenerate(line)
		if args, _, ok, err := skelgenArgs(words, filepath.FromSlash("/m"), &goModule{path: self.path, dir: self.dir, tools: []string{skelgenCmd}}); !ok || err != nil || len(args) != 1 {
			t.Errorf("%q: args %q, %v, %v", line, args, ok, err)
		}
	}
	words, _ = splitGenerate("go tool skelgen x.bpf.c")
	if _, _, _, err := skelgenArgs(words, "", &goModule{tools: []string{skelgenCmd, "example.com/x/skelgen/v2"}}); err == nil || !strings.Contains(err.Error(), "example.com/x/skelgen/v2") {
		t.Errorf("go tool skelgen naming two tools: err = %v, want one naming the other", err)
	}
	words, _ = splitGenerate("go run golang.org/x/tools/cmd/stringer -type T")
	if _, _, ok, err := skelgenArgs(words, "", nil); ok || err != nil {
		t.Error("stringer line taken for skelgen")
	}
	for _, bad := range []string{`"a"b`, `"a`, `"\q"`} {
		if _, err := splitGenerate(bad); err == nil {
			t.Errorf("%s: split, want an error as go generate gives", bad)
		}
	}
}

func TestUnknownProgramKind(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/progs/progs_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := ReadObject("progs.o", renameSection(t, data, "socket", "sockex"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Skeleton(obj, SkeletonConfig{Package: "p", Stem: "progs", ObjectFile: "progs.o", Target: Target{Clang: "bpfel"}})
	if err == nil || !strings.Contains(err.Error(), "progs.o") || !strings.Contains(err.Error(), `section "sockex"`) {
		t.Fatalf("err = %v, want an error naming the file and section", err)
	}
}

func TestShortDiff(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\n")
	b := []byte("a\nb\nX\nd\ne\nf\n")
	got := shortDiff(a, b, 10)
	want := "  @@ line 3 @@\n  -c\n  +X\n  +f\n"
	if got != want {
		t.Errorf("shortDiff = %q, want %q", got, want)
	}
	if got := shortDiff([]byte("\x00a"), []byte("\x00b"), 10); !strings.Contains(got, "binary files differ") {
		t.Errorf("binary diff = %q", got)
	}
}
