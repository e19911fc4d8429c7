//go:build linux

package weightbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recordEnv, set in a go build's environment, makes the test binary that
// build's -toolexec wrapper: it runs the tool and, for a compile, appends
// to the file recordEnv names the package's import path, the compiler's
// CPU time in ns and its maximum resident set size in KiB.
const recordEnv = "WEIGHTBENCH_RECORD"

func TestMain(m *testing.M) {
	if record := os.Getenv(recordEnv); record != "" && len(os.Args) > 1 {
		os.Exit(toolexec(record, os.Args[1], os.Args[2:]))
	}
	os.Exit(m.Run())
}

// toolexec runs tool with args as go build would and returns its exit
// status.
func toolexec(record, tool string, args []string) int {
	cmd := exec.Command(tool, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	ps := cmd.ProcessState
	if ps == nil {
		fmt.Fprintln(os.Stderr, "weightbench:", err)
		return 1
	}
	pkg := os.Getenv("TOOLEXEC_IMPORTPATH") // set by go build for each package's tools
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if ok && ps.Success() && pkg != "" && strings.TrimSuffix(filepath.Base(tool), ".exe") == "compile" {
		line := fmt.Sprintf("%s %d %d\n", pkg, ru.Utime.Nano()+ru.Stime.Nano(), ru.Maxrss)
		f, err := os.OpenFile(record, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(line) // one write: whole lines from concurrent compiles
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weightbench:", err)
			return 1
		}
	}
	return ps.ExitCode()
}

// usage is what the wrapper recorded of one package's compile.
type usage struct {
	cpu    time.Duration // user + system
	rssKiB int64
}

// pkg is a package of a scratch module.
type pkg struct {
	path, dir string // import path, directory
}

// builder compiles packages of scratch modules with the wrapper.
type builder struct {
	toolexec string // the -toolexec program
	scratch  string // where the record file goes
	nonce    int
}

func newBuilder(tb testing.TB) *builder {
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return &builder{toolexec: self, scratch: tb.TempDir()}
}

// nonceFile is the file rewritten in a measured package: not generated
// code, left out of the counted lines.
const nonceFile = "zz_weightbench_nonce.go"

// compile rewrites the nonce file of each of pkgs and builds them in
// module mod, one compile at a time, so that they, and only they and what
// imports them, are compiled again; it returns each one's compile as the
// wrapper recorded it, and an error when the wrapper recorded none for one.
func (bd *builder) compile(mod string, pkgs ...pkg) (map[string]usage, error) {
	args := []string{"build", "-p", "1", "-toolexec", bd.toolexec}
	for _, p := range pkgs {
		data, err := os.ReadFile(filepath.Join(p.dir, nonceFile))
		if os.IsNotExist(err) {
			data, err = packageClause(p.dir)
		}
		if err != nil {
			return nil, err
		}
		bd.nonce++
		head, _, _ := bytes.Cut(data, []byte("\n"))
		src := fmt.Sprintf("%s\n\nconst weightbenchNonce = %d\n", head, bd.nonce)
		if err := os.WriteFile(filepath.Join(p.dir, nonceFile), []byte(src), 0o644); err != nil {
			return nil, err
		}
		args = append(args, p.path)
	}
	record, err := os.CreateTemp(bd.scratch, "record")
	if err != nil {
		return nil, err
	}
	record.Close()
	defer os.Remove(record.Name())
	cmd := exec.Command("go", args...)
	cmd.Dir = mod
	cmd.Env = append(goEnv(), recordEnv+"="+record.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(record.Name())
	if err != nil {
		return nil, err
	}
	got := map[string]usage{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		cpu, err1 := strconv.ParseInt(f[1], 10, 64)
		rss, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("record line %q", line)
		}
		got[f[0]] = usage{time.Duration(cpu), rss}
	}
	for _, p := range pkgs {
		if got[p.path].cpu <= 0 {
			return nil, fmt.Errorf("go build -toolexec %s: no compile of %s recorded", bd.toolexec, p.path)
		}
	}
	return got, nil
}

// packageClause returns the package clause of a Go file in dir.
func packageClause(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go file", dir)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	in := bufio.NewScanner(bytes.NewReader(data))
	for in.Scan() {
		if strings.HasPrefix(in.Text(), "package ") {
			return in.Bytes(), nil
		}
	}
	return nil, fmt.Errorf("%s: no package clause", files[0])
}

// goEnv is the environment of the go commands run in scratch modules:
// offline as far as the module cache allows, with go.mod completed as
// needed.
func goEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
}

// needGo skips when there is no go command.
func needGo(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("skipped: no go command on PATH")
	}
}

// trivialModule writes a module with one small package and returns the
// module's directory and the package.
func trivialModule(t *testing.T) (string, pkg) {
	mod := t.TempDir()
	dir := filepath.Join(mod, "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"go.mod":   "module example.com/trivial\n\ngo 1.26\n",
		"p/p.go":   "// Package p adds.\npackage p\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"p/doc.go": "package p\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mod, pkg{"example.com/trivial/p", dir}
}

// TestCompileRecorded: the wrapper records the compile of a trivial
// package, and so again on a second build: the nonce makes the go command
// compile it rather than take it from its cache.
func TestCompileRecorded(t *testing.T) {
	needGo(t)
	mod, p := trivialModule(t)
	bd := newBuilder(t)
	for i := range 2 {
		got, err := bd.compile(mod, p)
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		u := got[p.path]
		t.Logf("build %d: compile CPU %v, max RSS %d KiB", i, u.cpu, u.rssKiB)
		if u.cpu <= 0 || u.rssKiB <= 0 {
			t.Errorf("build %d: recorded %+v, want CPU and memory", i, u)
		}
	}
}

// TestCompileNothingRecorded: a build whose -toolexec records nothing
// (env, which only runs the tool) is an error, not a zero.
func TestCompileNothingRecorded(t *testing.T) {
	needGo(t)
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("skipped: no env command")
	}
	mod, p := trivialModule(t)
	bd := newBuilder(t)
	bd.toolexec = env
	got, err := bd.compile(mod, p)
	if err == nil || !strings.Contains(err.Error(), "no compile of "+p.path+" recorded") {
		t.Fatalf("compile with a wrapper that records nothing: %v, %v; want an error", got, err)
	}
}
