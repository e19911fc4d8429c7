package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/internal/conformance"

	"github.com/skelgen/skelgen/internal/testenv"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVMTestOutput checks the report format and exit status on files whose
// outcome is known: one of each kind.
func TestVMTestOutput(t *testing.T) {
	dir := t.TempDir()
	files := []struct{ path, text string }{
		{"tests/ok.data", "-- asm\nmov %r0, 0x11\nexit\n-- result\n0x11\n"},
		{"tests/wrong.data", "-- asm\nmov %r0, 1\nexit\n-- result\n0x2\n"},
		{"tests/fancy.data", "-- asm\nexit\n-- elf\n00\n-- result\n0x0\n"},
		{"tests/faults.data", "-- asm\nldxdw %r0, [%r1+8]\nexit\n-- error\nout of bounds\n"},
		{"negative/bad.data", "-- asm\nmov %r0, %r11\nexit\n-- result\n0x0\n"},
		{"negative/accepted.data", "-- asm\nmov %r0, 3\nexit\n-- result\n0x3\n"},
	}
	var args []string
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		writeFile(t, p, f.text)
		args = append(args, p)
	}
	code, out, errOut := runCLI(t, "", append([]string{"vm", "test"}, args...)...)
	want := []string{
		"PASS ok",
		"FAIL wrong: r0=0x1, want 0x2",
		`SKIP fancy: unknown section "elf"`,
		"PASS faults",
		"REJECTED bad: assemble: line 2 col 10: invalid register: \"%r11\"",
		"FAIL accepted: not rejected: program ran and returned r0=0x3",
		"3 passed, 2 failed, 1 skipped",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if code != 1 || errOut != "" {
		t.Errorf("exit %d, stderr %q; want 1 and nothing", code, errOut)
	}

	code, out, _ = runCLI(t, "", "vm", "test", "-rules", "tests", args[0], args[5])
	if code != 0 || !strings.HasSuffix(out, "PASS accepted\n2 passed, 0 failed, 0 skipped\n") {
		t.Errorf("-rules tests: exit %d, output\n%s", code, out)
	}
	for _, bad := range [][]string{{"vm"}, {"vm", "test"}, {"vm", "test", "-rules", "x", "f.data"}, {"vm", "nope"}} {
		if code, _, _ := runCLI(t, "", bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
}

// suiteDir finds the conformance suite beside the module root.
func suiteDir(t *testing.T) string {
	t.Helper()
	return testenv.Conformance(t)
}

// TestVMTestSuite runs the whole tests/ directory through the command.
func TestVMTestSuite(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(suiteDir(t), "tests", "*.data"))
	code, out, _ := runCLI(t, "", append([]string{"vm", "test"}, files...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(files)+1 {
		t.Fatalf("%d lines for %d files", len(lines), len(files))
	}
	want := fmt.Sprintf("%d passed, 0 failed, 0 skipped", len(files))
	if last := lines[len(lines)-1]; last != want || code != 0 {
		t.Errorf("last line %q, exit %d; want %q, 0", last, code, want)
	}
}

// runnerHex encodes bytes as the suite's runner does: each byte in hex
// followed by two spaces.
func runnerHex(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		fmt.Fprintf(&sb, "%02x  ", c)
	}
	return sb.String()
}

// TestVMPluginSuite drives the plugin as the suite's runner would, for every
// test with a result, and compares the printed r0.
func TestVMPluginSuite(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(suiteDir(t), "tests", "*.data"))
	n := 0
	for _, f := range files {
		c, err := conformance.ParseFile(f)
		if err != nil || !c.HasResult || c.HasError || len(c.Unknown) > 0 {
			continue
		}
		prog, err := c.Program()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		code, out, errOut := runCLI(t, runnerHex(prog)+"\n", "vm", "plugin", runnerHex(c.Mem), "")
		if want := fmt.Sprintf("%x\n", c.Result); code != 0 || out != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", c.Name, code, out, errOut, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no test ran")
	}
	t.Logf("plugin protocol: %d programs", n)
}

func TestVMPlugin(t *testing.T) {
	prog, err := asm.Assemble("ldxb %r0, [%r1+1]\nadd %r0, %r2\nexit")
	if err != nil {
		t.Fatal(err)
	}
	progHex := fmt.Sprintf("%x", prog)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"stdin", progHex, []string{"0a 0b 0c"}, 0, "e\n", ""},
		{"program flag", "", []string{"--program", progHex, "0a0b"}, 0, "d\n", ""},
		{"options as one argument", "", []string{"0a  0b  ", "--program " + progHex}, 0, "d\n", ""},
		{"out of bounds", progHex, []string{"0a"}, 1, "", "invalid read of 1 bytes at context+1"},
		{"bad hex", "zz", []string{"00"}, 1, "", "program: hex input"},
		{"empty", "", []string{"00"}, 1, "", "program: empty"},
		{"invalid instruction", "ff00000000000000", nil, 1, "", "load"},
		{"bad memory", progHex, []string{"0"}, 1, "", "memory: hex input"},
		{"not elf", progHex, []string{"--elf", "00"}, 1, "", "elf:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, append([]string{"vm", "plugin"}, tt.args...)...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errOut, tt.stderr) || (tt.stderr == "") != (errOut == "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, stderr containing %q", code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestVMPluginELF compiles a program with clang-19 and runs it with --elf.
func TestVMPluginELF(t *testing.T) {
	cc, err := exec.LookPath("clang-19")
	if err != nil {
		if os.Getenv("SKELGEN_REQUIRE_CLANG") == "1" {
			t.Fatal("clang-19 not found")
		}
		t.Skip("clang-19 not found")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	obj := filepath.Join(dir, "p.o")
	writeFile(t, src, "unsigned long long f(unsigned char *mem, unsigned long long len) { return mem[0] * 3 + len; }\n")
	if out, err := exec.Command(cc, "-target", "bpfel", "-O2", "-mcpu=v4", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang-19: %v\n%s", err, out)
	}
	elf, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, string(elf), "vm", "plugin", "--elf", "05 00")
	if code != 0 || out != "11\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, \"11\\n\" (5*3+2)", code, out, errOut)
	}
}
