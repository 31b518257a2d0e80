package testutil

import (
	"context"
	"io"
)

// CancelingReader reads Left bytes of R, then cancels its context and
// returns its error, as the CLI's readers do when a run is interrupted:
// the read of what R holds is cut short at Left.
type CancelingReader struct {
	R      io.Reader
	Left   int
	Ctx    context.Context
	Cancel context.CancelFunc
}

func (c *CancelingReader) Read(p []byte) (int, error) {
	if c.Left <= 0 {
		c.Cancel()
		return 0, c.Ctx.Err()
	}
	n, err := c.R.Read(p[:min(len(p), c.Left)])
	c.Left -= n
	return n, err
}
