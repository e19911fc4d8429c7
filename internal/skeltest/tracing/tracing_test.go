package tracing

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// This kernel refuses fentry/fexit at load (EPERM); the skeleton's error
// must say what the kernel lacks. Where trampolines work, the programs must
// load and attach.
func TestFentryLoadError(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadTracing(nil)
	if err == nil {
		defer objs.Close()
		if err := objs.AttachAll(); err != nil {
			t.Fatal(err)
		}
		t.Log("this kernel loads fentry/fexit programs")
		return
	}
	t.Logf("load error: %v", err)
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("unexpected load error: %v", err)
	}
	if !strings.Contains(err.Error(), "fentry/fexit") || !strings.Contains(err.Error(), "trampolines") {
		t.Errorf("the load error does not explain the refusal: %v", err)
	}
}
