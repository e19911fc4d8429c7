package main

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// users names user-space addresses from the ELF symbols of the files each
// process maps, as /proc/PID/maps shows them while the process runs.
type users struct {
	maps  map[uint32][]mapping
	files map[string]*elfSyms // nil: unreadable
}

// mapping is a file-backed executable mapping of a process.
type mapping struct {
	start, end, off uint64
	path            string
}

// elfSyms is a file's function symbols by address, and its loadable
// segments to turn file offsets into addresses.
type elfSyms struct {
	addrs []uint64
	sizes []uint64
	names []string
	loads []*elf.Prog
}

func newUsers() *users {
	return &users{maps: map[uint32][]mapping{}, files: map[string]*elfSyms{}}
}

// note reads pid's executable mappings once.
func (u *users) note(pid uint32) {
	if _, ok := u.maps[pid]; ok {
		return
	}
	u.maps[pid] = nil
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.Contains(fields[1], "x") || !filepath.IsAbs(fields[5]) {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		// The file as the process sees it, through its root.
		path := fmt.Sprintf("/proc/%d/root%s", pid, fields[5])
		u.maps[pid] = append(u.maps[pid], mapping{start, end, off, path})
	}
}

// name is the function containing addr in pid, or the address.
func (u *users) name(pid uint32, addr uint64) string {
	for _, m := range u.maps[pid] {
		if addr < m.start || addr >= m.end {
			continue
		}
		base := filepath.Base(m.path)
		syms := u.file(m.path)
		if syms == nil {
			return fmt.Sprintf("%#x (%s)", addr, base)
		}
		fileOff := addr - m.start + m.off
		for _, p := range syms.loads {
			if fileOff >= p.Off && fileOff < p.Off+p.Filesz {
				if name, ok := syms.lookup(fileOff - p.Off + p.Vaddr); ok {
					return name
				}
			}
		}
		return fmt.Sprintf("%#x (%s)", addr, base)
	}
	return fmt.Sprintf("%#x", addr)
}

func (u *users) file(path string) *elfSyms {
	if s, ok := u.files[path]; ok {
		return s
	}
	u.files[path] = nil
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	s := &elfSyms{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			s.loads = append(s.loads, p)
		}
	}
	type sym struct {
		addr, size uint64
		name       string
	}
	var all []sym
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, e := range syms {
			if elf.ST_TYPE(e.Info) == elf.STT_FUNC && e.Value != 0 {
				all = append(all, sym{e.Value, e.Size, e.Name})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].addr < all[j].addr })
	for _, e := range all {
		s.addrs, s.sizes, s.names = append(s.addrs, e.addr), append(s.sizes, e.size), append(s.names, e.name)
	}
	u.files[path] = s
	return s
}

// lookup is the function whose extent holds vaddr.
func (s *elfSyms) lookup(vaddr uint64) (string, bool) {
	i := sort.Search(len(s.addrs), func(i int) bool { return s.addrs[i] > vaddr }) - 1
	if i < 0 || (s.sizes[i] > 0 && vaddr >= s.addrs[i]+s.sizes[i]) {
		return "", false
	}
	return s.names[i], true
}
