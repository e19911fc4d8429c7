package bridge

// SetBeforeDetach makes Serve call f when the tool has stopped, before it
// detaches the programs, until the returned function is called.
func SetBeforeDetach(f func()) (restore func()) {
	beforeDetach = f
	return func() { beforeDetach = nil }
}
