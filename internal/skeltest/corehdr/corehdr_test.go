package corehdr

import (
	"os"
	"os/exec"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestMinimalHeaderTool loads the tool built on the regenerated minimal
// header, lets it see an exec and reads the CO-RE-read fields back.
func TestMinimalHeaderTool(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadCorehdr(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	info, err := objs.LastExec.Lookup(uint32(os.Getpid()))
	if err != nil {
		t.Fatalf("no exec recorded with our pid as parent: %v", err)
	}
	if info.Ppid != uint32(os.Getpid()) || info.Pid == 0 || info.Uid != uint32(os.Getuid()) {
		t.Errorf("exec info = %+v, want ppid %d, uid %d", info, os.Getpid(), os.Getuid())
	}
	if got := string(info.Comm[:4]); got != "true" {
		t.Errorf("comm = %q, want true", info.Comm)
	}
}
