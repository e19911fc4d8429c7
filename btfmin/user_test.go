package btfmin

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/skelgen/skelgen/internal/testenv"
)

// fullVmlinuxH dumps the running kernel's BTF as C with bpftool, the way
// a project would generate its vmlinux.h.
func fullVmlinuxH(t testing.TB, kernel string) []byte {
	t.Helper()
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		if os.Getenv("SKELGEN_REQUIRE_CLANG") == "1" {
			t.Fatal("bpftool not found")
		}
		t.Skip("skipped: bpftool not found")
	}
	out, err := exec.Command(bpftool, "btf", "dump", "file", kernel, "format", "c").Output()
	if err != nil {
		t.Fatalf("bpftool: %v", err)
	}
	return out
}

// TestExecsnoopAsUser does what a user replacing vmlinux.h would: build
// execsnoop against the full vmlinux.h, generate the minimal header,
// delete vmlinux.h, rebuild, then load and attach both builds at once and
// check that one exec produces the same event in each.
func TestExecsnoopAsUser(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	testenv.Kernel(t)
	testenv.Tracefs(t)

	src, err := os.ReadFile(corpusSource("execsnoop"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	source := filepath.Join(dir, "execsnoop.bpf.c")
	vmlinux := filepath.Join(dir, "vmlinux.h")
	if err := os.WriteFile(source, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vmlinux, fullVmlinuxH(t, kernel), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(out string) {
		t.Helper()
		cmd := exec.Command(clang, "-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-c", source, "-o", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("clang: %v\n%s", err, msg)
		}
	}
	origObj := filepath.Join(dir, "orig.bpf.o")
	build(origObj)

	res, err := Generate(Config{Objects: []string{origObj}, Source: source, CFlags: corpusCFlags, KernelBTF: []string{kernel}, Clang: clang})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(vmlinux); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vmlinux, res.Header, 0o644); err != nil {
		t.Fatal(err)
	}
	newObj := filepath.Join(dir, "new.bpf.o")
	build(newObj)
	t.Logf("minimal vmlinux.h: %d lines", bytes.Count(res.Header, []byte("\n")))

	readers := []*ringbuf.Reader{attachExecsnoop(t, origObj), attachExecsnoop(t, newObj)}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var events [][]byte
	for _, rd := range readers {
		rd.SetDeadline(time.Now().Add(5 * time.Second))
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("reading event: %v", err)
		}
		events = append(events, rec.RawSample)
	}
	if !bytes.Equal(events[0], events[1]) {
		t.Errorf("events differ:\noriginal %x\nminimal  %x", events[0], events[1])
	}
	e := events[1]
	if len(e) < 88 {
		t.Fatalf("event of %d bytes", len(e))
	}
	pid, ppid := binary.NativeEndian.Uint32(e[0:]), binary.NativeEndian.Uint32(e[8:])
	comm := string(bytes.TrimRight(e[56:72], "\x00"))
	if int(pid) != cmd.Process.Pid || int(ppid) != os.Getpid() || comm != "true" {
		t.Errorf("event pid %d ppid %d comm %q; want %d %d \"true\"", pid, ppid, comm, cmd.Process.Pid, os.Getpid())
	}
	t.Logf("event: pid %d ppid %d uid %d comm %q parent comm %q args %d bytes",
		pid, ppid, binary.NativeEndian.Uint32(e[12:]), comm, bytes.TrimRight(e[72:88], "\x00"), binary.NativeEndian.Uint64(e[32:]))
}

// attachExecsnoop loads an execsnoop build filtered to this process's
// children and attaches it to sched_process_exec.
func attachExecsnoop(t *testing.T, obj string) *ringbuf.Reader {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpec(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables["target_ppid"].Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(obj), err)
	}
	t.Cleanup(func() { coll.Close() })
	l, err := link.Tracepoint("sched", "sched_process_exec", coll.Programs["handle_exec"], nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rd, err := ringbuf.NewReader(coll.Maps["events"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

// TestCorpusLoadsWithMinimalHeader rebuilds every corpus tool on its
// compact header and has the kernel load and attach it: CO-RE relocation
// against the running kernel and the verifier both accept the new build.
func TestCorpusLoadsWithMinimalHeader(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	testenv.Kernel(t)
	testenv.Tracefs(t)
	for _, name := range testenv.Sample(corpus, 2) {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Objects: []string{corpusObject(name)}, Source: corpusSource(name), CFlags: corpusCFlags, KernelBTF: []string{kernel}, Clang: clang}
			res, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			obj := filepath.Join(t.TempDir(), name+".bpf.o")
			diags, ok, err := compileSource(clang, cfg.Source, corpusCFlags, t.TempDir(), "vmlinux.h", res.Header, obj)
			if err != nil || !ok {
				t.Fatalf("%v\n%s", err, diags)
			}
			spec, err := ebpf.LoadCollectionSpec(obj)
			if err != nil {
				t.Fatal(err)
			}
			coll, err := ebpf.NewCollection(spec)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			defer coll.Close()
			for pname, ps := range spec.Programs {
				prog := coll.Programs[pname]
				prefix, hook, _ := strings.Cut(ps.SectionName, "/")
				var l link.Link
				switch prefix {
				case "tp":
					group, event, _ := strings.Cut(hook, "/")
					l, err = link.Tracepoint(group, event, prog, nil)
				case "tp_btf":
					l, err = link.AttachTracing(link.TracingOptions{Program: prog})
				case "raw_tp":
					l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: hook, Program: prog})
				default:
					t.Fatalf("%s: no attach rule for section %s", pname, ps.SectionName)
				}
				if err != nil {
					t.Fatalf("attach %s (%s): %v", pname, ps.SectionName, err)
				}
				l.Close()
			}
		})
	}
}
