package testenv

import (
	"os"

	"golang.org/x/sys/unix"
)

const bpffsMagic = 0xcafe4a11

func isBPFFS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && uint32(st.Type) == bpffsMagic
}

func mountBPFFS(path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	return unix.Mount("bpf", path, "bpf", 0, "")
}

const tracefsMagic = 0x74726163

func ensureTracefs() error {
	const path = "/sys/kernel/tracing"
	var st unix.Statfs_t
	if unix.Statfs(path, &st) == nil && uint32(st.Type) == tracefsMagic {
		return nil
	}
	return unix.Mount("tracefs", path, "tracefs", 0, "")
}
