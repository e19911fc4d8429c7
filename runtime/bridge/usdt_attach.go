//go:build !windows

package bridge

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	goruntime "runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// usdtSpecsMap is the map usdt.bpf.h reads argument specs from.
const usdtSpecsMap = "__bpf_usdt_specs"

// attachUSDT attaches a USDT program (written with libbpf's usdt.bpf.h)
// to every site of probe provider:name in the binary at path, for
// process pid (0: every process), as libbpf does: each site's argument
// specification goes into the object's __bpf_usdt_specs map under an ID
// the site's uprobe carries as its BPF cookie (Linux 5.15 and later), and
// a probe with a semaphore has it counted by the kernel. The link
// detaches every site; it pins the first.
func (p Program) attachUSDT(path, provider, name string, pid int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := p.usdt(path, provider, name, pid)
	return p.wrap("usdt "+path+":"+provider+":"+name, lk, err)
}

func (p Program) usdt(path, provider, name string, pid int) (link.Link, error) {
	var specs *ebpf.Map
	if p.set != nil && p.set.Coll != nil {
		specs = p.set.Coll.Maps[usdtSpecsMap]
	}
	if specs == nil {
		return nil, fmt.Errorf("the object has no %s map: write the program with usdt.bpf.h", usdtSpecsMap)
	}
	cookie, _, err := linuxValue("LINUX_HAS_BPF_COOKIE")
	if err != nil {
		return nil, err
	}
	if cookie != "1" {
		return nil, fmt.Errorf("USDT arguments need BPF cookies (Linux 5.15): %w", ebpf.ErrNotSupported)
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := readUSDTNotes(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ex, err := link.OpenExecutable(path)
	if err != nil {
		return nil, err
	}
	var links []link.Link
	fail := func(err error) (link.Link, error) {
		closeLinks(links)
		return nil, err
	}
	for _, n := range all {
		if n.provider != provider || n.name != name {
			continue
		}
		spec, err := usdtSpec(n.args, goruntime.GOARCH, binary.NativeEndian)
		if err != nil {
			return fail(fmt.Errorf("%s: probe %s:%s at %#x: %w", path, provider, name, n.loc, err))
		}
		id, err := p.set.usdtSpecID(specs)
		if err != nil {
			return fail(err)
		}
		if err := specs.Put(id, spec); err != nil {
			return fail(fmt.Errorf("%s[%d]: %w", usdtSpecsMap, id, err))
		}
		opts := &link.UprobeOptions{PID: pid, Cookie: uint64(id)}
		if opts.Address, err = fileOffset(f, n.loc, true); err != nil {
			return fail(fmt.Errorf("%s: probe %s:%s: %w", path, provider, name, err))
		}
		if n.sema != 0 {
			if opts.RefCtrOffset, err = fileOffset(f, n.sema, false); err != nil {
				return fail(fmt.Errorf("%s: semaphore of %s:%s: %w", path, provider, name, err))
			}
		}
		lk, err := ex.Uprobe(name, p.prog, opts)
		if err != nil {
			return fail(err)
		}
		links = append(links, lk)
	}
	switch len(links) {
	case 0:
		return nil, fmt.Errorf("%s: no USDT probe %s:%s", path, provider, name)
	case 1:
		return links[0], nil
	}
	return &multiLink{Link: links[0], rest: links[1:]}, nil
}

// usdtSpecID gives out the next free index of the specs map.
func (s *Set) usdtSpecID(specs *ebpf.Map) (uint32, error) {
	s.autoMu.Lock()
	defer s.autoMu.Unlock()
	if s.usdtNext >= specs.MaxEntries() {
		return 0, fmt.Errorf("%s is full: %d probe sites attached", usdtSpecsMap, s.usdtNext)
	}
	s.usdtNext++
	return s.usdtNext - 1, nil
}

// multiLink is the links of several probe sites as one: Close detaches
// them all; the rest of link.Link acts on the first.
type multiLink struct {
	link.Link
	rest []link.Link
}

func (m *multiLink) Close() error {
	return errors.Join(m.Link.Close(), closeLinks(m.rest))
}
