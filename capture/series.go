package capture

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/model"
)

// SeriesFile is one file of a rotated capture series: its name, for
// positions, and how to open it.
type SeriesFile struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// ReadSeries reads the files of one capture point, rotated by tcpdump -C or
// -G, as one timeline: the files are read in the order given (oldest first)
// through one tracker, so a connection that spans two files is one attempt.
// Each packet keeps its own file and frame as evidence. The Result's Info
// adds up the files; Infos gives each file's own: its packets, their
// times and counts, and the streams and outcomes of the connections whose
// first packet it holds, so that the files' counts add up to the
// Result's.
func ReadSeries(ctx context.Context, files []SeriesFile, opts Options) (*Result, []model.CaptureInfo, error) {
	return readSeries(ctx, files, opts, decodeAll)
}

// readSeries is ReadSeries through the decoding paths mode allows.
func readSeries(ctx context.Context, files []SeriesFile, opts Options, mode decoding) (*Result, []model.CaptureInfo, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("capture: empty series")
	}
	t := track.NewTracker(files[0].Name, opts.trackOptions())
	t.SetShards(opts.shards())
	var errs model.ErrorList
	var infos []model.CaptureInfo
	var links []string
	for _, f := range files {
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
		infos = append(infos, *info)
		if !slices.Contains(links, info.LinkType) {
			links = append(links, info.LinkType)
		}
	}
	t.SetFile(files[0].Name)
	res := t.Finish()
	for i := range infos {
		o, c := t.FileOutcomes(infos[i].File), &infos[i].Counts
		c.Established, c.Refused, c.Unanswered, c.SYNACKClientRST = o.Established, o.Refused, o.Unanswered, o.SYNACKClientRST
	}
	if len(infos) > 0 {
		res.Info.Format = infos[0].Format
	}
	res.Info.LinkType = strings.Join(links, ", ")
	return res, infos, errs.Err()
}
