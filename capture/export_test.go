package capture

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/model"
)

// CaptureFiles lists the packet captures under roots, for the tests of
// package capture_test.
var CaptureFiles = captureFiles

// SamePaths reads a capture through each decoding path and says how the
// results differ, for the tests of package capture_test.
var SamePaths = samePaths

// ReadRecordByRecord is Read with each record read and handed on alone,
// never a run of plain records at once (Stage.HotPcap).
func ReadRecordByRecord(ctx context.Context, r io.Reader, name string, opts Options) (*Result, error) {
	return read(ctx, r, name, opts, decodeRecords)
}

// ReadSeriesRecordByRecord is ReadSeries with each record read and handed
// on alone.
func ReadSeriesRecordByRecord(ctx context.Context, files []SeriesFile, opts Options) (*Result, []model.CaptureInfo, error) {
	return readSeries(ctx, files, opts, decodeRecords, nil)
}
