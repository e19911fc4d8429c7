//go:build !linux && !windows

package bridge

// mountTracefs does nothing: only Linux has tracefs (and Windows, attaching
// nothing, needs no mountTracefs).
func mountTracefs() error { return nil }
