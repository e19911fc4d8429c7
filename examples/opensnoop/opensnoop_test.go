package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/examples/internal/tooltest"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestOpensnoop opens a file that exists and one that does not from this
// process and requires both opens in the output: the file descriptor of
// the first, ENOENT for the second. On a kernel that refuses fexit the
// tool must have fallen back to the tracepoints.
func TestOpensnoop(t *testing.T) {
	testenv.Kernel(t)
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("tracepoint=%v", force), func(t *testing.T) {
			out, stop := tooltest.Run(t, func(ctx context.Context, out *tooltest.Buffer, ready func()) error {
				return run(ctx, out, options{pid: os.Getpid(), tracepoint: force}, ready)
			})
			dir := t.TempDir()
			present := filepath.Join(dir, "present")
			if err := os.WriteFile(present, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(present)
			if err != nil {
				t.Fatal(err)
			}
			fd := f.Fd()
			f.Close()
			missing := filepath.Join(dir, "missing")
			if _, err := os.Open(missing); err == nil {
				t.Fatal("opened a missing file")
			}
			okLine := tooltest.WaitFor(t, out, fmt.Sprintf(" %d   0 %s", fd, present))
			failLine := tooltest.WaitFor(t, out, " -1   2 "+missing)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			how := out.Lines("# tracing with")
			t.Logf("%s\n%s\n%s", strings.Join(how, ""), okLine, failLine)
			for _, l := range []string{okLine, failLine} {
				if !strings.HasPrefix(l, fmt.Sprint(os.Getpid())) {
					t.Errorf("line %q is not of this process", l)
				}
			}
			if len(how) != 1 {
				t.Fatalf("no line says what the tool attached:\n%s", out.String())
			}
			if force && !strings.Contains(how[0], "tracepoints") {
				t.Errorf("-tracepoint: %s", how[0])
			}
		})
	}
}

// TestFallbackAutoload checks the fallback itself: on this kernel the
// fexit program is refused, so load switches it off and loads the
// tracepoints, and the disabled program is skipped by AttachAll.
func TestFallbackAutoload(t *testing.T) {
	testenv.Kernel(t)
	spec, err := LoadOpensnoopSpec()
	if err != nil {
		t.Fatal(err)
	}
	objs, how, err := load(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	t.Logf("attached: %s", how)
	if strings.Contains(how, "refused") {
		if objs.FexitOpenat2 != nil || objs.EnterOpenat == nil || objs.ExitOpenat == nil {
			t.Errorf("after the fallback: fexit loaded %v, tracepoints loaded %v/%v",
				objs.FexitOpenat2 != nil, objs.EnterOpenat != nil, objs.ExitOpenat != nil)
		}
	} else if objs.FexitOpenat2 == nil || objs.EnterOpenat != nil {
		t.Error("fexit loaded, but the programs disabled do not say so")
	}
	if err := objs.AttachAll(); err != nil {
		t.Fatalf("AttachAll: %v", err)
	}
}
