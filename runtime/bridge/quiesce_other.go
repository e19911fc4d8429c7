//go:build !linux

package bridge

// quiesce does nothing where there are no kernel programs to wait for.
func quiesce() {}
