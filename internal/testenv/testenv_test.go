package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a test to see whether a helper skips or fails.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any) {
	r.skipped = "skip"
	runtime.Goexit()
}

func callShared(root string) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sharedIn(r, root, "conformance")
	}()
	<-done
	return r
}

// TestSharedMissing: a missing ../shared skips, and fails once CI asks for
// clang or the kernel.
func TestSharedMissing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "module")
	t.Setenv("SKELGEN_REQUIRE_CLANG", "")
	t.Setenv("SKELGEN_REQUIRE_KERNEL", "")
	if r := callShared(root); r.skipped == "" || r.failed != "" {
		t.Errorf("without SKELGEN_REQUIRE_*: skipped=%q failed=%q, want a skip", r.skipped, r.failed)
	}
	for _, env := range []string{"SKELGEN_REQUIRE_CLANG", "SKELGEN_REQUIRE_KERNEL"} {
		t.Setenv(env, "1")
		if r := callShared(root); r.failed == "" {
			t.Errorf("with %s=1: skipped=%q, want a failure", env, r.skipped)
		}
		t.Setenv(env, "")
	}
}

// TestSharedFound: ../shared is found relative to the module root.
func TestSharedFound(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "module")
	if err := os.MkdirAll(filepath.Join(base, "shared", "conformance"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	got := sharedIn(r, root, "conformance")
	if !strings.HasSuffix(got, filepath.Join("shared", "conformance")) || r.failed != "" || r.skipped != "" {
		t.Errorf("got %q (failed=%q skipped=%q)", got, r.failed, r.skipped)
	}
}

func TestModuleRoot(t *testing.T) {
	root := ModuleRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "testenv", "testenv.go")); err != nil {
		t.Errorf("ModuleRoot = %s: %v", root, err)
	}
}
