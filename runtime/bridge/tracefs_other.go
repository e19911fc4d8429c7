//go:build !linux

package bridge

// mountTracefs does nothing: only Linux has tracefs.
func mountTracefs() error { return nil }
