//go:build !(386 || amd64) || race

package bridge

import "sync/atomic"

// free gives the seat back (see seat_tso.go for x86 processors).
func (b *seatCount) free() { atomic.StoreUint32(&b.busy, 0) }
