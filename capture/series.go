package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/model"
)

// SeriesFile is one file of a rotated capture series: its name, for
// positions, and how to open it.
type SeriesFile struct {
	Name string
	Open func() (io.ReadCloser, error)
	// First, when set, is the time of the file's first record (as
	// FirstTime gives it), for ReadRotated to tell before reading the
	// file that it does not follow the one before.
	First time.Time
}

// ErrNotRotated is the error ReadRotated wraps for files that do not
// follow each other in time.
var ErrNotRotated = errors.New("the files do not follow each other in time")

// ReadSeries reads the files of one capture point, rotated by tcpdump -C or
// -G, as one timeline: the files are read in the order given (oldest first)
// through one tracker, so a connection that spans two files is one attempt.
// Each packet keeps its own file and frame as evidence. The Result's Info
// adds up the files; Infos gives each file's own: its packets, their
// times and counts, and the streams and outcomes of the connections whose
// first packet it holds, so that the files' counts add up to the
// Result's.
func ReadSeries(ctx context.Context, files []SeriesFile, opts Options) (*Result, []model.CaptureInfo, error) {
	return readSeries(ctx, files, opts, decodeAll, false)
}

// ReadRotated is ReadSeries for files that may not be one series, in the
// order of their first packets: each must start no more than a second
// before the last packet of the file before it, as the files tcpdump -C
// and -G write do. At the first that does not, ReadRotated stops, and
// returns no Result and an error wrapping ErrNotRotated: before reading
// the file when its SeriesFile.First tells already, after otherwise.
func ReadRotated(ctx context.Context, files []SeriesFile, opts Options) (*Result, []model.CaptureInfo, error) {
	return readSeries(ctx, files, opts, decodeAll, true)
}

// follows reports whether a file whose first packet came at first follows
// prev in a rotated series.
func follows(prev *model.CaptureInfo, first time.Time) bool {
	return !first.Before(prev.Last.Add(-time.Second))
}

// FirstTime returns the time of the first record of the capture r reads
// (pcap or pcapng, perhaps gzip-compressed), reading no further: the zero
// Time when it holds none, and an error when r is not a capture or its
// first record cannot be read.
func FirstTime(r io.Reader) (time.Time, error) {
	src, err := pcapfile.NewReader(r)
	if err != nil {
		return time.Time{}, err
	}
	defer src.Close()
	var rec pcapfile.Record
	switch err := src.Next(&rec); {
	case errors.Is(err, io.EOF):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, err
	}
	return rec.Time(), nil
}

// readSeries is ReadSeries through the decoding paths mode allows, and
// ReadRotated when rotated is set.
func readSeries(ctx context.Context, files []SeriesFile, opts Options, mode decoding, rotated bool) (*Result, []model.CaptureInfo, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("capture: empty series")
	}
	t := track.NewTracker(files[0].Name, opts.trackOptions())
	t.SetShards(opts.shards())
	var errs model.ErrorList
	var infos []model.CaptureInfo
	var links []string
	notRotated := func(name string, first time.Time) error {
		prev := &infos[len(infos)-1]
		return fmt.Errorf("capture: %w: %s starts at %s, %s ends at %s", ErrNotRotated, name,
			first.Format(time.RFC3339Nano), prev.File, prev.Last.Format(time.RFC3339Nano))
	}
	for _, f := range files {
		if rotated && len(infos) > 0 && !f.First.IsZero() && !follows(&infos[len(infos)-1], f.First) {
			return nil, nil, notRotated(f.Name, f.First)
		}
		rc, err := f.Open()
		if err != nil {
			errs.Add(model.Pos{File: f.Name}, "", err)
			continue
		}
		mark := t.StartFile(f.Name)
		info, err := feed(ctx, rc, f.Name, t, mode)
		rc.Close()
		errs.Append(err)
		if info == nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, nil, ctxErr
			}
			continue
		}
		info.Node, info.File = opts.Node, f.Name
		info.Counts, info.First, info.Last = t.EndFile(mark)
		info.Packets = info.Counts.Packets
		if rotated && len(infos) > 0 && !follows(&infos[len(infos)-1], info.First) {
			return nil, nil, notRotated(f.Name, info.First)
		}
		infos = append(infos, *info)
		if !slices.Contains(links, info.LinkType) {
			links = append(links, info.LinkType)
		}
	}
	t.SetFile(files[0].Name)
	res := t.Finish()
	counted := map[string]bool{}
	for i := range infos {
		c := &infos[i].Counts
		o := t.FileOutcomes(infos[i].File)
		if counted[infos[i].File] {
			// A file given twice: its connections' positions name it
			// once, and its first reading counts them.
			o = model.Counts{}
		}
		counted[infos[i].File] = true
		c.Established, c.Refused, c.Unanswered, c.SYNACKClientRST = o.Established, o.Refused, o.Unanswered, o.SYNACKClientRST
	}
	if len(infos) > 0 {
		res.Info.Format = infos[0].Format
	}
	res.Info.LinkType = strings.Join(links, ", ")
	return res, infos, errs.Err()
}
