package iters

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// load loads the object. Some kernels (this project's test machines
// among them) refuse map element iterators at load with EPERM, as they
// refuse fentry: the map element iterator is then left out, and its test
// skips.
func load(t *testing.T) *ItersObjects {
	t.Helper()
	testenv.Kernel(t)
	spec, err := LoadItersSpec()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(nil)
	if errors.Is(err, os.ErrPermission) && strings.Contains(err.Error(), "program dump_counts") {
		t.Logf("map element iterator refused: %v", err)
		spec.Programs.DumpCounts.SetAutoload(false)
		objs, err = spec.Load(nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objs.Close() })
	return objs
}

// readAll returns a function reading an iterator Open returned, all of
// it, and closing it.
func readAll(t *testing.T) func(io.ReadCloser, error) string {
	return func(rd io.ReadCloser, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// tasks parses the task iterator's lines "tgid tid comm".
func tasks(t *testing.T, out string) [][3]string {
	t.Helper()
	var rows [][3]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("line %q: want tgid tid comm", line)
		}
		rows = append(rows, [3]string{f[0], f[1], f[2]})
	}
	return rows
}

// TestTaskIterator starts a process and finds it in the task iterator's
// output, over all tasks and over that process alone.
func TestTaskIterator(t *testing.T) {
	objs := load(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := strconv.Itoa(cmd.Process.Pid)

	all := tasks(t, readAll(t)(objs.DumpTask.Open(bridge.IterTask{})))
	found := false
	for _, r := range all {
		found = found || r == [3]string{pid, pid, "sleep"}
	}
	if !found {
		t.Errorf("%d tasks, none is %s sleep", len(all), pid)
	}
	own := strconv.Itoa(os.Getpid())
	ours := 0
	for _, r := range all {
		if r[0] == own {
			ours++
		}
	}
	if ours < 2 {
		t.Errorf("%d threads of the test process (%s) listed, a Go process has several", ours, own)
	}

	one := tasks(t, readAll(t)(objs.DumpTask.Open(bridge.IterTask{PID: uint32(cmd.Process.Pid)})))
	if len(one) != 1 || one[0] != [3]string{pid, pid, "sleep"} {
		t.Errorf("iterator over pid %s: %v", pid, one)
	}
	t.Logf("%d tasks; over pid %s: %v", len(all), pid, one)
}

// TestMapElemIterator walks the map it is given.
func TestMapElemIterator(t *testing.T) {
	objs := load(t)
	if objs.DumpCounts == nil {
		t.Skip("this kernel refuses map element iterators at load (EPERM)")
	}
	want := map[string]bool{}
	for k := range uint32(5) {
		if err := objs.Counts.Put(k, uint64(k)*100); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("%d=%d", k, k*100)] = true
	}
	out := readAll(t)(objs.DumpCounts.Open(objs.Counts))
	lines := strings.Fields(out)
	if len(lines) != len(want) {
		t.Errorf("%d lines, want %d: %q", len(lines), len(want), out)
	}
	for _, l := range lines {
		if !want[l] {
			t.Errorf("line %q is not an element of the map", l)
		}
	}
}

// TestIteratorPinned pins the link Attach makes and reads the iterator
// from the pinned file, as cat would; AttachAll attaches the iterator that
// takes no argument.
func TestIteratorPinned(t *testing.T) {
	objs := load(t)
	lk, err := objs.DumpMaps.Attach()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testenv.BPFFS(t), fmt.Sprintf("skelgen_iters_%d", os.Getpid()))
	if err := lk.Pin(path); err != nil {
		t.Fatal(err)
	}
	defer lk.Unpin()
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := objs.Counts.Raw().Info()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := info.ID()
	if line := fmt.Sprintf("%d counts\n", id); !strings.Contains(string(out), line) {
		t.Errorf("the maps iterator does not list %q:\n%s", line, out)
	}
	if err := objs.AttachAll(); err != nil {
		t.Errorf("AttachAll: %v", err)
	}
}

// TestCgroupIterator walks a cgroup hierarchy the test makes, from its top
// directory, by the FD and the ID the arguments give: the cgroups' IDs
// are their directories' inode numbers.
func TestCgroupIterator(t *testing.T) {
	objs := load(t)
	root := testenv.Cgroup2(t)
	top := filepath.Join(root, fmt.Sprintf("skelgen_iters_%d", os.Getpid()))
	dirs := []string{top, filepath.Join(top, "a"), filepath.Join(top, "a", "b")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for i := len(dirs) - 1; i >= 0; i-- {
			os.Remove(dirs[i])
		}
	}()
	var want []string
	var level0 int
	for i, d := range dirs {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			level0 = strings.Count(strings.TrimPrefix(d, root), "/")
		}
		want = append(want, fmt.Sprintf("%d %d", level0+i, st.Ino))
	}
	f, err := os.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := func(out string) []string { return strings.Split(strings.TrimSuffix(out, "\n"), "\n") }
	got := lines(readAll(t)(objs.DumpCgroup.Open(bridge.IterCgroup{FD: int(f.Fd()), Order: bridge.IterDescendantsPre})))
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("walk from %s (by FD): %q, want %q", top, got, want)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dirs[2], &st); err != nil {
		t.Fatal(err)
	}
	got = lines(readAll(t)(objs.DumpCgroup.Open(bridge.IterCgroup{ID: st.Ino, Order: bridge.IterSelfOnly})))
	if len(got) != 1 || got[0] != want[2] {
		t.Errorf("cgroup %s alone (by ID): %q, want %q", dirs[2], got, want[2])
	}
}
