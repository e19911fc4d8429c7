package btfmin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// fromSourceCorpus are sources written for the full vmlinux.h, each with
// an object built against it (testdata/Makefile): the oracle the header
// made from the source alone is checked against.
var fromSourceCorpus = append(append([]string(nil), corpus...), "filetrace")

// TestFromSource builds each corpus header from the source and the kernel
// BTF alone (no vmlinux.h at any step), then recompiles the source with it
// and compares every CO-RE relocation with the object built against the
// full vmlinux.h, against the running kernel and an older one.
func TestFromSource(t *testing.T) {
	clang := testenv.Clang(t)
	kernels := []string{runningKernelBTF(t), oldKernelBTF(t)}
	for _, name := range testenv.Sample(fromSourceCorpus, 3) {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Source: corpusSource(name), CFlags: corpusCFlags, KernelBTF: kernels, Clang: clang}
			res, own, err := FromSource(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !own.OK() || len(own.Targets) != 2 {
				t.Errorf("draft and final header disagree:\n%s", own)
			}
			full := cfg
			full.Objects = []string{corpusObject(name)}
			rep, err := Verify(full, res.Header)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Targets) != 2 || rep.Targets[0].Relocations == 0 {
				t.Fatalf("report covers %d targets: %s", len(rep.Targets), rep)
			}
			if !rep.OK() {
				t.Errorf("relocations differ from the object built against the full vmlinux.h:\n%s", rep)
			}
			t.Logf("%s: %d lines, %d bytes from the source alone\n%s", name, bytes.Count(res.Header, []byte("\n")), len(res.Header), rep)
		})
	}
}

// TestFromSourceRespectsUAPI: declarations the source gets from UAPI
// headers it includes itself are not redefined by the header.
func TestFromSourceRespectsUAPI(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	src := filepath.Join(t.TempDir(), "uapi.bpf.c")
	code := `#include <linux/bpf.h>
#include <linux/if_ether.h>
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct ethhdr);
} last SEC(".maps");

SEC("xdp")
int peek(struct xdp_md *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct ethhdr eth = { .h_proto = ETH_P_IP };
	bpf_map_update_elem(&last, &pid, &eth, BPF_ANY);
	return XDP_PASS;
}
char LICENSE[] SEC("license") = "GPL";
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	res, rep, err := FromSource(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("relocations differ:\n%s", rep)
	}
	h := string(res.Header)
	for _, uapi := range []string{"struct ethhdr {", "struct xdp_md {", "enum bpf_map_type {", "BPF_ANY", "XDP_PASS"} {
		if strings.Contains(h, uapi) {
			t.Errorf("header redefines %q, which <linux/bpf.h> or <linux/if_ether.h> defines:\n%s", uapi, h)
		}
	}
	if !strings.Contains(h, "struct task_struct {") {
		t.Errorf("header lacks task_struct:\n%s", h)
	}
}
