// Package ksyms names kernel addresses from /proc/kallsyms, for the
// example tools that print kernel stacks.
package ksyms

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Table is the kernel's text symbols by address.
type Table struct {
	addrs []uint64
	names []string
}

// Load reads /proc/kallsyms; it fails when the file shows no addresses
// (kptr_restrict, or not root).
func Load() (*Table, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type sym struct {
		addr uint64
		name string
	}
	var syms []sym
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || (fields[1] != "t" && fields[1] != "T") {
			continue
		}
		a, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		syms = append(syms, sym{a, fields[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(syms) == 0 {
		return nil, errors.New("/proc/kallsyms shows no addresses")
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	t := &Table{addrs: make([]uint64, len(syms)), names: make([]string, len(syms))}
	for i, s := range syms {
		t.addrs[i], t.names[i] = s.addr, s.name
	}
	return t, nil
}

// Name returns the symbol containing a, or a as hex (also on a nil Table).
func (t *Table) Name(a uint64) string {
	if t == nil {
		return fmt.Sprintf("%#x", a)
	}
	i := sort.Search(len(t.addrs), func(i int) bool { return t.addrs[i] > a }) - 1
	if i < 0 {
		return fmt.Sprintf("%#x", a)
	}
	return t.names[i]
}
