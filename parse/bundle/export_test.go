package bundle

import (
	"context"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
)

// SetRotatedReader makes the bundle read a capture series' runs through
// f until the function it returns is called.
func SetRotatedReader(f func(sf []capture.SeriesFile)) (restore func()) {
	old := rotatedReader
	rotatedReader = func(ctx context.Context, sf []capture.SeriesFile, opts capture.Options) (*capture.Result, []model.CaptureInfo, int, error) {
		f(sf)
		return old(ctx, sf, opts)
	}
	return func() { rotatedReader = old }
}
