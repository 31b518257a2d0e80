package capture

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/model"
)

// SeriesFile is one file of a rotated capture series: its name, for
// positions, and how to open it.
type SeriesFile struct {
	Name string
	Open func() (io.ReadCloser, error)
	// Head, when set (its Format not empty), is what the file's head
	// tells (ReadHead): ReadRotated, which must tell whether a file
	// follows the one before it before reading it, otherwise opens the
	// file once more to read it.
	Head Head
}

// Head is what the head of a capture file tells of it: its format
// ("pcap", "pcapng"), its link types (pcapng's interfaces' before its
// first record) and the time of its first record (the zero Time for a
// file of no record, or whose first record is stamped outside the years
// captures are, 1970 to 2199: a corrupt stamp that would sort the file
// after the others of its series).
type Head struct {
	Format   string
	LinkType string
	First    time.Time
}

// ReadSeries reads the files of one capture point, rotated by tcpdump -C or
// -G, as one timeline: the files are read in the order given (oldest first)
// through one tracker, so a connection that spans two files is one attempt.
// Each packet keeps its own file and frame as evidence. The Result's Info
// adds up the files; Infos gives each file's own: its packets, their
// times and counts, and the streams and outcomes of the connections whose
// first packet it holds, so that the files' counts add up to the
// Result's. A read whose ctx ends is cut short in the file it was
// reading, as Read is; the files after it are named in the error as not
// read.
func ReadSeries(ctx context.Context, files []SeriesFile, opts Options) (*Result, []model.CaptureInfo, error) {
	return readSeries(ctx, files, opts, decodeAll, nil)
}

// ReadRotated is ReadSeries for files that may not be one series, given
// in the order of their first packets: it reads the longest run of them,
// from the first, in which each file follows the one before as the files
// tcpdump -C and -G write do (of its format and link types, starting
// after it, and no more than the skew of a capture's timestamps, 100 ms
// for pcap and a second for pcapng, before the last packet before it),
// and returns the run's Result, its files' Infos and n, how many files
// the run holds (at least one). The caller reads files[n:] next, as
// another run or alone. Captures named alike and taken at once (several
// interfaces or nodes), files of no packet, and a file whose head cannot
// be read (which reading it says why) are runs of one.
//
// A run ends before the file that does not follow, which is not opened
// when its SeriesFile.Head tells: so the attempts ReadRotated hands on
// (Options.EachAttempt) are those of its run alone. A run of one file
// reads as Read reads that file. A run whose ctx ends ends with the file
// it was reading, cut short there, or before the file whose first frame
// it did not reach.
func ReadRotated(ctx context.Context, files []SeriesFile, opts Options) (res *Result, infos []model.CaptureInfo, n int, err error) {
	n = len(files)
	res, infos, err = readSeries(ctx, files, opts, decodeAll, &n)
	return res, infos, n, err
}

// follows reports whether a file of head h follows files in a rotated
// series, the last of which has head prev, and whose last packet came at
// last: as tcpdump -C and -G (or dumpcap's ring buffer) write them, it is
// of their format and link types, and starts after prev, and after last
// but for skewOf its format. Files that overlap for longer are captures
// taken at once (of several interfaces or nodes named alike), and files
// that start together, test files whose packets all bear one time; a
// file of no packet (h.First or last zero) has nothing to join, nor to be
// joined: it is read alone.
func follows(prev Head, last time.Time, h Head) bool {
	if h.First.IsZero() || last.IsZero() || h.Format != prev.Format || h.LinkType != prev.LinkType {
		return false
	}
	return h.First.After(prev.First) && !h.First.Before(last.Add(-skewOf(h.Format)))
}

// skewOf returns how far before the last packet of a file the next file of
// its series may start: the disorder of a capture's own timestamps, which
// the writer may cut between two files. tcpdump writes pcap from one
// socket, whose packets are stamped as they come (on -i any, each core's
// and each interface's a little out of order); dumpcap writes pcapng from
// several interfaces' buffers, each delivered in its own time.
func skewOf(format string) time.Duration {
	if format == "pcapng" {
		return time.Second
	}
	return 100 * time.Millisecond
}

// headOf returns f.Head, or else what the file's head tells, the zero
// Head when it cannot be read.
func headOf(f SeriesFile) Head {
	if f.Head.Format != "" {
		return f.Head
	}
	rc, err := f.Open()
	if err != nil {
		return Head{}
	}
	defer rc.Close()
	h, _ := ReadHead(rc)
	return h
}

// ReadHead reads the head of the capture r reads (pcap or pcapng, perhaps
// gzip-compressed), up to its first record and no further, and returns
// what it tells: an error when r is not a capture or its first record
// cannot be read. A pcapng file's link types are those of the interfaces
// it describes before its first record (dumpcap and editcap describe them
// all there), each once, in their order.
func ReadHead(r io.Reader) (Head, error) {
	src, err := pcapfile.NewReader(r)
	if err != nil {
		return Head{}, err
	}
	defer src.Close()
	h := Head{Format: src.Format()}
	var rec pcapfile.Record
	switch err := src.Next(&rec); {
	case errors.Is(err, io.EOF):
		return h, nil
	case err != nil:
		return Head{}, err
	}
	if track.CaptureStamp(rec.Time()) {
		// A first record stamped outside the years captures are, or
		// with seconds left zero or all ones (corrupt or forged),
		// cannot place the file among others: it is left zero, and
		// the file read alone.
		h.First = rec.Time()
	}
	if !src.Sections() {
		h.LinkType = decode.LinkName(src.LinkType(0))
		return h, nil
	}
	var names []string
	for _, f := range src.Interfaces() {
		if n := decode.LinkName(f.Link); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	h.LinkType = strings.Join(names, ", ")
	return h, nil
}

// feedFile feeds the file f of a series to t, and returns the mark
// StartFile gave and the file's format, link types and command (nil when
// it could not be opened or is not a capture).
func feedFile(ctx context.Context, f SeriesFile, t *track.Tracker, mode decoding) (track.FileMark, *model.CaptureInfo, error) {
	rc, err := f.Open()
	if err != nil {
		return track.FileMark{}, nil, &model.Error{Pos: model.Pos{File: f.Name}, Err: err}
	}
	defer rc.Close()
	mark := t.StartFile(f.Name)
	info, err := feed(ctx, rc, f.Name, t, mode)
	return mark, info, err
}

// cutAfter ends a series read cut short by its context (ctxErr) before
// rest, the files from index n on: ReadRotated's run ends there, and its
// caller finds the rest cut short too; ReadSeries names them as not read.
func cutAfter(rest []SeriesFile, n int, run *int, errs *model.ErrorList, ctxErr error) {
	if run != nil {
		*run = n
		return
	}
	for _, g := range rest {
		errs.Addf(model.Pos{File: g.Name}, "", "%s: %w", model.SkippedCutShort, ctxErr)
	}
}

// readSeries is ReadSeries through the decoding paths mode allows, and,
// when run is set, ReadRotated: it reads the files' first *run, which it
// sets.
func readSeries(ctx context.Context, files []SeriesFile, opts Options, mode decoding, run *int) (*Result, []model.CaptureInfo, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("capture: empty series")
	}
	t := track.NewTracker(files[0].Name, opts.trackOptions())
	t.SetShards(opts.shards())
	var errs model.ErrorList
	var infos []model.CaptureInfo
	var links []string
	var prev Head      // the head of the run's last file
	var last time.Time // the run's last packet
	for i, f := range files {
		if run != nil {
			h := headOf(f)
			if i > 0 && !follows(prev, last, h) {
				*run = i
				break
			}
			prev = h
		}
		mark, info, err := feedFile(ctx, f, t, mode)
		if info == nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				if i == 0 {
					return nil, nil, ctxErr // nothing read
				}
				// Cut short before f's first frame: the files before
				// are kept, and the run ends before f.
				cutAfter(files[i:], i, run, &errs, ctxErr)
				break
			}
			errs.Append(err)
			continue
		}
		errs.Append(err)
		info.Node, info.File = opts.Node, f.Name
		info.Counts, info.First, info.Last = t.EndFile(mark)
		info.Packets = info.Counts.Packets
		if info.Last.After(last) {
			last = info.Last
		}
		infos = append(infos, *info)
		if !slices.Contains(links, info.LinkType) {
			links = append(links, info.LinkType)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Cut short in f (feed kept what came before), the run ends
			// with it.
			cutAfter(files[i+1:], i+1, run, &errs, ctxErr)
			break
		}
	}
	t.SetFile(files[0].Name)
	res := t.Finish()
	errs.Append(t.FarTimes())
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
