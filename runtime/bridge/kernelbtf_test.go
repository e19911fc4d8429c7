package bridge

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// markBTF is raw BTF holding one type, an int named name, that tells
// which BTF a load chose.
func markBTF(t *testing.T, name string) []byte {
	t.Helper()
	b, err := btf.NewBuilder([]btf.Type{&btf.Int{Name: name, Size: 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

type entry struct {
	name, link string
	data       []byte
	typ        byte
	claim      int64 // a size larger than data's: the archive ends after data
}

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
			if e.link != "" {
				typ = tar.TypeLink
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Linkname: e.link, Typeflag: typ, Size: max(e.claim, int64(len(e.data))), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if last := entries[len(entries)-1]; last.claim > int64(len(last.data)) {
		// tar.Writer would ask for the rest: end the archive by hand.
		_, err = zw.Write(make([]byte, 1024))
	} else {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEmbeddedKernel(t *testing.T) {
	a, b := markBTF(t, "kernel_a"), markBTF(t, "kernel_b")
	ar := archive(t, entry{name: "5.4.0-1.btf", data: a}, entry{name: "6.1.0-2.btf", data: b}, entry{name: "6.1.0-3.btf", link: "6.1.0-2.btf"})
	names, err := KernelBTFReleases(ar)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"5.4.0-1", "6.1.0-2", "6.1.0-3"}; !slices.Equal(names, want) {
		t.Errorf("releases %q, want %q", names, want)
	}
	for release, want := range map[string][]byte{"5.4.0-1": a, "6.1.0-2": b, "6.1.0-3": b, "6.1.0-4": nil} {
		got, _, err := embeddedKernel(ar, release)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %d bytes, want %d", release, len(got), len(want))
		}
	}
	for _, bad := range []struct {
		ar   []byte
		want string
	}{
		{[]byte("not gzip"), "gzip"},
		{archive(t, entry{name: "6.1.0-3.btf", link: "6.1.0-2.btf"}), `links to "6.1.0-2.btf"`},
		{archive(t, entry{name: "README", data: a}), `entry "README"`},
		{archive(t, entry{name: "x/6.1.btf", data: a}), `entry "x/6.1.btf"`},
		{archive(t, entry{name: "6.1.btf", link: "/etc/passwd", typ: tar.TypeSymlink}), "want a file or a hard link"},
		// Entries claiming 4 GiB the archive does not hold: refused from
		// the header, without reading.
		{archive(t, entry{name: "6.1.0-2.btf", data: b}, entry{name: "6.1.0-3.btf", link: "6.1.0-2.btf", claim: 4 << 30}), "entry 6.1.0-3.btf: type '1' claims 4294967296 bytes"},
		{archive(t, entry{name: "6.1.btf", typ: tar.TypeCont, claim: 4 << 30}), "entry 6.1.btf: type '7', not a regular file"},
		{archive(t, entry{name: "6.1.btf", claim: 4 << 30}), "entry 6.1.btf: 4294967296 bytes, more than"},
	} {
		if _, err := KernelBTFReleases(bad.ar); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("got %v, want an error with %q", err, bad.want)
		}
	}
}

// TestKernelTypes chooses the BTF of a load as on a kernel with and without
// BTF of its own, of a release the object carries and of one it does not.
func TestKernelTypes(t *testing.T) {
	core, err := LoadSpec(mustRead(t, filepath.Join("..", "..", "examples", "execsnoop", "execsnoop_bpfel.o")))
	if err != nil {
		t.Fatal(err)
	}
	if !hasCORERelocations(core) {
		t.Fatal("execsnoop has no CO-RE relocation")
	}
	plain := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"p": {Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.LoadImm(asm.R0, 0, asm.DWord), asm.Return()}}}}

	dir := t.TempDir()
	release := filepath.Join(dir, "osrelease")
	ownBTF := filepath.Join(dir, "vmlinux")
	fileBTF := filepath.Join(dir, "file.btf")
	if err := os.WriteFile(fileBTF, markBTF(t, "from_file"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(a, b string, c func() bool) { runningKernelBTF, kernelReleaseFile, kernelBTFElsewhere = a, b, c }(runningKernelBTF, kernelReleaseFile, kernelBTFElsewhere)
	runningKernelBTF, kernelReleaseFile = ownBTF, release
	kernelBTFElsewhere = func() bool { return false }
	ar := archive(t, entry{name: "6.1.0-test.btf", data: markBTF(t, "embedded_6_1")}, entry{name: "6.12.0-test.btf", data: markBTF(t, "embedded_6_12")})
	given, err := btf.LoadSpecFromReader(bytes.NewReader(markBTF(t, "given")))
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name    string
		spec    *ebpf.CollectionSpec
		running string // the running kernel's release
		ownBTF  bool   // the running kernel has BTF
		opts    LoadOptions
		want    string // the type of the chosen BTF; "" for none
		err     string
	}{
		{name: "matching release", spec: core, running: "6.12.0-test", want: "embedded_6_12"},
		{name: "kernel's own BTF first", spec: core, running: "6.12.0-test", ownBTF: true},
		{name: "no relocations", spec: plain, running: "5.0.0-other"},
		{name: "release not carried", spec: core, running: "5.0.0-other", err: "running kernel 5.0.0-other has no BTF (" + ownBTF + ") and the object carries none for it, only for 6.1.0-test, 6.12.0-test"},
		{name: "no embedded BTF", spec: core, running: "5.0.0-other", opts: LoadOptions{embedded: nil}, err: "running kernel 5.0.0-other has no BTF (" + ownBTF + "), which the programs' CO-RE relocations need: generate the skeleton with skelgen -btf-for DIR"},
		{name: "no embedded BTF, own BTF", spec: core, running: "5.0.0-other", ownBTF: true, opts: LoadOptions{embedded: nil}},
		{name: "forced kernel", spec: core, running: "6.12.0-test", ownBTF: true, opts: LoadOptions{Kernel: "6.1.0-test"}, want: "embedded_6_1"},
		{name: "forced kernel not carried", spec: core, running: "6.12.0-test", opts: LoadOptions{Kernel: "4.19.0"}, err: "Kernel 4.19.0: the object carries no BTF for it, only for 6.1.0-test, 6.12.0-test"},
		{name: "file", spec: core, running: "6.1.0-test", opts: LoadOptions{KernelBTF: fileBTF}, want: "from_file"},
		{name: "missing file", spec: core, running: "6.1.0-test", opts: LoadOptions{KernelBTF: filepath.Join(dir, "none.btf")}, err: "KernelBTF: "},
		{name: "KernelTypes", spec: core, running: "6.1.0-test", opts: LoadOptions{Collection: ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: given}}}, want: "given"},
		{name: "KernelTypes and Kernel", spec: core, opts: LoadOptions{Kernel: "6.1.0-test", Collection: ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: given}}}, err: "both"},
		{name: "KernelBTF and Kernel", spec: core, opts: LoadOptions{Kernel: "6.1.0-test", KernelBTF: fileBTF}, err: "both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(ownBTF)
			if c.ownBTF {
				if err := os.WriteFile(ownBTF, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(release, []byte(c.running+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := c.opts
			if !strings.HasPrefix(c.name, "no embedded BTF") {
				opts = *WithKernelBTF(&opts, ar)
			}
			got, err := kernelTypes(c.spec, &opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if got != nil {
					t.Fatal("got kernel BTF, want none (cilium/ebpf's default)")
				}
				return
			}
			if got == nil {
				t.Fatalf("got none, want %s", c.want)
			}
			if _, err := got.AnyTypeByName(c.want); err != nil {
				t.Errorf("the chosen BTF lacks %s: %v", c.want, err)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExplainNoKernelBTF: a program the kernel attaches by its own BTF
// IDs, refused as not supported on a kernel without BTF, is explained:
// -btf-for cannot help it.
func TestExplainNoKernelBTF(t *testing.T) {
	defer func(p string) { runningKernelBTF = p }(runningKernelBTF)
	runningKernelBTF = filepath.Join(t.TempDir(), "vmlinux")
	spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{
		"dump_task": {Name: "dump_task", SectionName: "iter/task", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceIter, AttachTo: "task"},
	}}
	refused := fmt.Errorf("program dump_task: task iterator: %w", ebpf.ErrNotSupported)
	err := explainLoad(spec, refused)
	if !errors.Is(err, ebpf.ErrNotSupported) || !strings.Contains(err.Error(), "program dump_task (iter/task) attaches by the running kernel's own BTF IDs, and this kernel has no BTF") || !strings.Contains(err.Error(), "-btf-for") {
		t.Errorf("got %v", err)
	}
	if err := os.WriteFile(runningKernelBTF, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := explainLoad(spec, refused); err != refused {
		t.Errorf("with kernel BTF: %v, want the error unchanged", err)
	}
}
