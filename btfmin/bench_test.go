package btfmin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// BenchmarkCompile compiles each corpus tool against the full vmlinux.h
// and against its minimal header (b.Run pairs), and reports the lines of
// each header: the minimal one should be at most 1% of vmlinux.h and
// compile at least 10x faster.
func BenchmarkCompile(b *testing.B) {
	clang := testenv.Clang(b)
	kernel := runningKernelBTF(b)
	full := fullVmlinuxH(b, kernel)
	fullLines := float64(bytes.Count(full, []byte("\n")))
	// The floor under every pair below: clang starting up and compiling
	// nothing. The header can only change the time above it.
	b.Run("empty", func(b *testing.B) {
		src := filepath.Join(b.TempDir(), "empty.c")
		if err := os.WriteFile(src, []byte("int x;\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cmd := exec.Command(clang, "-g", "-O2", "-target", "bpf", "-c", src, "-o", src+".o")
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, msg)
			}
		}
	})
	for _, name := range corpus {
		res, err := Generate(Config{Objects: []string{corpusObject(name)}, Source: corpusSource(name), CFlags: corpusCFlags, KernelBTF: []string{kernel}, Clang: clang})
		if err != nil {
			b.Fatal(err)
		}
		lines := float64(bytes.Count(res.Header, []byte("\n")))
		for _, h := range []struct {
			label  string
			header []byte
			extra  []string
		}{
			{"vmlinux.h", full, nil},
			{"minimal", res.Header, nil},
			// Front end only: the part of the compile a header can
			// change, without clang's start-up and code generation.
			{"vmlinux.h-syntax-only", full, []string{"-fsyntax-only"}},
			{"minimal-syntax-only", res.Header, []string{"-fsyntax-only"}},
		} {
			b.Run(name+"/"+h.label, func(b *testing.B) {
				dir := b.TempDir()
				src := filepath.Join(dir, name+".bpf.c")
				data, err := os.ReadFile(corpusSource(name))
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(src, data, 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "vmlinux.h"), h.header, 0o644); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					args := append([]string{"-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-c", src, "-o", filepath.Join(dir, "out.o")}, h.extra...)
					cmd := exec.Command(clang, args...)
					if msg, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v\n%s", err, msg)
					}
				}
				b.ReportMetric(float64(bytes.Count(h.header, []byte("\n"))), "lines")
				if h.label == "minimal" || h.label == "minimal-syntax-only" {
					b.ReportMetric(100*lines/fullLines, "%lines")
				}
			})
		}
	}
}

// BenchmarkGenerateCorpus times btfmin itself on the whole corpus: from
// the objects alone, and completed from the sources (which runs clang).
func BenchmarkGenerateCorpus(b *testing.B) {
	kernel := runningKernelBTF(b)
	b.Run("objects", func(b *testing.B) {
		for b.Loop() {
			for _, name := range corpus {
				if _, err := Generate(Config{Objects: []string{corpusObject(name)}, KernelBTF: []string{kernel}}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("sources", func(b *testing.B) {
		clang := testenv.Clang(b)
		for b.Loop() {
			for _, name := range corpus {
				cfg := Config{Objects: []string{corpusObject(name)}, Source: corpusSource(name), CFlags: corpusCFlags, KernelBTF: []string{kernel}, Clang: clang}
				if _, err := Generate(cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
