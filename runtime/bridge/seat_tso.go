//go:build (386 || amd64) && !race

package bridge

// free gives the seat back with a plain store. x86 processors keep a
// store after every earlier load and store of the same processor, so the
// run's accesses to its run state and maps are done before any processor
// sees the seat free; the locked instruction an atomic store costs buys
// only that the store is seen before the processor's next load, which
// lifetime does without (see lifetime, wait). The Go compiler keeps a
// store after the stores and loads that come before it in the program,
// as this needs. The race detector's builds use the atomic store, which
// it understands.
func (b *seatCount) free() { b.busy = 0 }
