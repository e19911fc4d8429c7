// Package cli holds what the example tools' main functions share.
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"time"
)

// Context returns a context that ends on Ctrl-C or, when d > 0, after d.
func Context(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if d <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}

// CloseOnDone closes c when ctx ends, so that a blocked Read returns.
func CloseOnDone(ctx context.Context, c io.Closer) {
	go func() {
		<-ctx.Done()
		c.Close()
	}()
}
