package gen

import (
	"github.com/skelgen/skelgen/btfmin"

	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// probeSource reads registers through bpf_tracing.h: BPF_KPROBE,
// BPF_KRETPROBE, BPF_UPROBE (libbpf releases before 1.2 lack it; it is
// BPF_KPROBE there too) and PT_REGS_PARM3.
const probeSource = `//go:build ignore
#include INCLUDE
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#ifndef BPF_UPROBE
#define BPF_UPROBE BPF_KPROBE
#endif

__u64 last_fd, last_len, last_ret, last_size;

SEC("kprobe/do_sys_openat2")
int BPF_KPROBE(on_open, int dfd, const char *filename)
{
	last_fd = dfd + (__u64)filename;
	return 0;
}

SEC("kretprobe/do_sys_openat2")
int BPF_KRETPROBE(on_open_ret, long ret)
{
	last_ret = ret;
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(on_malloc, __u64 size)
{
	last_size = size;
	return 0;
}

SEC("kprobe/vfs_read")
int on_read(struct pt_regs *ctx)
{
	last_len = PT_REGS_PARM3(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
`

func writeProbeSource(t *testing.T, dir, include string) string {
	t.Helper()
	src := filepath.Join(dir, "probe.bpf.c")
	if err := os.WriteFile(src, []byte(strings.Replace(probeSource, "INCLUDE", include, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestHeaderForArchitectures: -target amd64,arm64 -header makes one
// header from an x86 kernel BTF that both objects compile against. The
// amd64 object's CO-RE relocations resolve against that kernel BTF, and
// the arm64 object's against arm64's struct user_pt_regs, each to the
// offset the object was compiled with: the header's layouts are the
// kernels'. With the default targets, the error says to name the
// architectures.
func TestHeaderForArchitectures(t *testing.T) {
	testenv.Clang(t)
	kernel := testenv.OldKernelBTF(t)
	dir := t.TempDir()
	src := writeProbeSource(t, dir, `"vmlinux.h"`)
	cfg := Config{Input: src, Package: "probe", ImportRuntime: true, Header: "vmlinux.h", HeaderBTF: []string{kernel}}
	var err error
	if cfg.Targets, err = ParseTargets("amd64,arm64"); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string][]byte{}
	var header []byte
	for _, f := range files {
		switch filepath.Base(f.Path) {
		case "probe_amd64_bpfel.o":
			objs["amd64"] = f.Data
		case "probe_arm64_bpfel.o":
			objs["arm64"] = f.Data
		case "vmlinux.h":
			header = f.Data
		}
	}
	if len(objs) != 2 || header == nil {
		t.Fatalf("want the header and two objects, got %d objects, header %t", len(objs), header != nil)
	}
	for _, want := range []string{"#if defined(__TARGET_ARCH_arm64)\n", "#elif defined(__TARGET_ARCH_x86) /* from the kernel BTF */\n", "struct user_pt_regs {", "struct pt_regs {"} {
		if !bytes.Contains(header, []byte(want)) {
			t.Errorf("header lacks %q:\n%s", want, header)
		}
	}

	kspec, err := btf.LoadSpec(kernel)
	if err != nil {
		t.Fatal(err)
	}
	var ptRegs *btf.Struct
	if err := kspec.TypeByName("pt_regs", &ptRegs); err != nil {
		t.Fatal(err)
	}
	// BPF_KPROBE's two arguments, the return value and PT_REGS_PARM3.
	want := map[string][]uint64{"amd64": memberOffsets(t, ptRegs, "di", "si", "ax", "dx")}
	// arm64's struct user_pt_regs as arch/arm64/include/uapi/asm/ptrace.h
	// declares it: regs[31], sp, pc, pstate, all __u64.
	u64 := &btf.Int{Name: "long long unsigned int", Size: 8}
	arm64Regs := &btf.Struct{Name: "user_pt_regs", Size: 34 * 8, Members: []btf.Member{
		{Name: "regs", Type: &btf.Array{Index: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}, Type: u64, Nelems: 31}},
		{Name: "sp", Type: u64, Offset: 31 * 64},
		{Name: "pc", Type: u64, Offset: 32 * 64},
		{Name: "pstate", Type: u64, Offset: 33 * 64},
	}}
	var b btf.Builder
	if _, err := b.Add(arm64Regs); err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	arm64Spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	// regs[0], regs[1] (arguments and return value), regs[2].
	want["arm64"] = []uint64{0, 8, 16}
	targets := map[string]*btf.Spec{"amd64": kspec, "arm64": arm64Spec}
	for arch, obj := range objs {
		got := coreOffsets(t, arch, obj, targets[arch])
		if !slices.Equal(got, want[arch]) {
			t.Errorf("%s: CO-RE byte offsets %v, want %v", arch, got, want[arch])
		}
	}

	// Committed, the header stands in for the kernel BTF where there is
	// none, whichever architecture comes first.
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	noKernel := cfg
	// Same base name: the header names the BTF it was made from.
	noKernel.HeaderBTF = []string{filepath.Join(dir, "absent", filepath.Base(kernel))}
	if noKernel.Targets, err = ParseTargets("arm64,amd64"); err != nil {
		t.Fatal(err)
	}
	again, err := Generate(context.Background(), noKernel)
	if err != nil {
		t.Fatalf("without kernel BTF: %v", err)
	}
	for _, f := range again {
		if filepath.Base(f.Path) == "vmlinux.h" && !bytes.Equal(f.Data, header) {
			t.Errorf("without kernel BTF, the header changes:\n%s", f.Data)
		}
	}

	// The default targets name no architecture: the error says which to
	// give.
	cfg.Targets = nil
	if _, err := Generate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "-target amd64,arm64") {
		t.Errorf("default targets: got %v, want the hint naming -target amd64,arm64", err)
	}
	// So does a compile without -header, against the header written.
	cfg.Header = ""
	if _, err := Generate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "Must specify a BPF target arch") || !strings.Contains(err.Error(), "-target amd64,arm64") {
		t.Errorf("default targets without -header: got %v, want clang's error and the hint", err)
	}
}

// memberOffsets returns the byte offsets of the named members of s,
// sorted.
func memberOffsets(t *testing.T, s *btf.Struct, names ...string) []uint64 {
	t.Helper()
	var out []uint64
	for _, n := range names {
		i := slices.IndexFunc(s.Members, func(m btf.Member) bool { return m.Name == n })
		if i < 0 {
			t.Fatalf("%s has no member %s", s.Name, n)
		}
		out = append(out, uint64(s.Members[i].Offset.Bytes()))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var reFixup = regexp.MustCompile(`^byte_off=(\d+)->(\d+)$`)

// coreOffsets resolves every CO-RE relocation of obj against target and
// returns the byte offsets, sorted and without repeats. Every relocation
// must be a field byte offset that resolves to the offset the object was
// compiled with.
func coreOffsets(t *testing.T, arch string, obj []byte, target *btf.Spec) []uint64 {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for name, prog := range spec.Programs {
		var relos []*btf.CORERelocation
		for i := range prog.Instructions {
			if r := btf.CORERelocationMetadata(&prog.Instructions[i]); r != nil {
				relos = append(relos, r)
			}
		}
		if len(relos) == 0 {
			t.Errorf("%s: program %s has no CO-RE relocation", arch, name)
			continue
		}
		fixups, err := btf.CORERelocate(relos, []*btf.Spec{target}, spec.ByteOrder, spec.Types.TypeID)
		if err != nil {
			t.Fatalf("%s: program %s: %v", arch, name, err)
		}
		for i, f := range fixups {
			m := reFixup.FindStringSubmatch(f.String())
			if m == nil || m[1] != m[2] {
				t.Errorf("%s: program %s: %s resolves to %s, want the compiled offset", arch, name, relos[i], f.String())
				continue
			}
			off, _ := strconv.ParseUint(m[2], 10, 64)
			out = append(out, off)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestAngleBracketHeader: libbpf-tools' #include <vmlinux.h> finds the
// header where -header writes it (here another directory than the
// source's) and, without -header, beside the source, with the default
// cflags.
func TestAngleBracketHeader(t *testing.T) {
	testenv.Clang(t)
	kernel := testenv.OldKernelBTF(t)
	srcDir, outDir := t.TempDir(), t.TempDir()
	src := writeProbeSource(t, srcDir, "<vmlinux.h>")
	cfg := Config{Input: src, OutputDir: outDir, Package: "probe", ImportRuntime: true, Header: "vmlinux.h", HeaderBTF: []string{kernel}, Targets: []Target{{Clang: "bpfel", GOARCH: "amd64"}}}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	// Without -header, the header beside the source.
	data, err := os.ReadFile(filepath.Join(outDir, "vmlinux.h"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srcDir, "vmlinux.h"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Header, cfg.OutputDir = "", t.TempDir()
	if _, err := Generate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// TestGOARCHesHaveLinuxArch: every GOARCH -target takes has the Linux
// architecture its __TARGET_ARCH_ define and header section need.
func TestGOARCHesHaveLinuxArch(t *testing.T) {
	for goarch := range goarches {
		if btfmin.LinuxArch(goarch) == "" {
			t.Errorf("GOARCH %s: no Linux architecture", goarch)
		}
	}
}

// profileSource is a profiler as tools write it: a perf_event program
// reading the sampled registers of its context, a struct
// bpf_perf_event_data whose regs (bpf_user_pt_regs_t) it holds by value.
const profileSource = `//go:build ignore
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	__u64 ip = PT_REGS_IP(&ctx->regs), one = 1;
	__u64 *n = bpf_map_lookup_elem(&counts, &ip);
	if (n)
		__sync_fetch_and_add(n, ctx->sample_period);
	else
		bpf_map_update_elem(&counts, &ip, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
`

// TestHeaderForPerfEvent: the header from the source alone serves a
// profiler on one architecture and on several: each architecture's
// section declares its bpf_user_pt_regs_t beside its registers, before
// struct bpf_perf_event_data holds it by value.
func TestHeaderForPerfEvent(t *testing.T) {
	testenv.Clang(t)
	kernel := testenv.OldKernelBTF(t)
	for _, targets := range []string{"amd64", "amd64,arm64", "arm64,riscv64,s390x,amd64"} {
		dir := t.TempDir()
		src := filepath.Join(dir, "profile.bpf.c")
		if err := os.WriteFile(src, []byte(profileSource), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := Config{Input: src, Package: "profile", ImportRuntime: true, Header: "vmlinux.h", HeaderBTF: []string{kernel}}
		var err error
		if cfg.Targets, err = ParseTargets(targets); err != nil {
			t.Fatal(err)
		}
		files, err := Generate(context.Background(), cfg)
		if err != nil {
			t.Fatalf("-target %s: %v", targets, err)
		}
		var header []byte
		objs := 0
		for _, f := range files {
			switch {
			case filepath.Base(f.Path) == "vmlinux.h":
				header = f.Data
			case strings.HasSuffix(f.Path, ".o"):
				objs++
			}
		}
		if objs != strings.Count(targets, ",")+1 || header == nil {
			t.Fatalf("-target %s: %d objects, header %t", targets, objs, header != nil)
		}
		regs := bytes.Index(header, []byte("bpf_user_pt_regs_t;\n"))
		data := bytes.Index(header, []byte("struct bpf_perf_event_data {"))
		if regs < 0 || data < 0 || regs > data {
			t.Errorf("-target %s: bpf_user_pt_regs_t at %d, struct bpf_perf_event_data at %d, want the first before:\n%s", targets, regs, data, header)
		}
		if strings.Contains(targets, "arm64") && !bytes.Contains(header, []byte("typedef struct user_pt_regs bpf_user_pt_regs_t;")) {
			t.Errorf("-target %s: no arm64 bpf_user_pt_regs_t:\n%s", targets, header)
		}
	}
}
