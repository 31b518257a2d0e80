// Package capture reads packet captures (pcap and pcapng, optionally
// gzip-compressed) and folds their packets into the evidence netmortem
// reasons about: TCP connection attempts with their handshake outcome, ICMP
// errors, and ARP claims, each with the frame numbers that prove it.
//
// The reader streams: it never holds the capture's packets, so memory
// follows the number of live connections, not the file size. It uses
// github.com/gopacket/gopacket's pure-Go pcapgo reader; no cgo, no libpcap.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/model"
)

// Options tune a capture read.
type Options struct {
	// Node is the node the capture was taken on, "" when unknown.
	Node string
	// Summary says whether attempts are summarized.
	Summary
	// Shards is how many goroutines track the TCP streams of a capture
	// file, each those whose 4-tuples hash to it: GOMAXPROCS when 0. The
	// Result is the same whatever their number.
	Shards int
}

// Summary says whether a capture's attempts are summarized and how: the
// one setting of summary mode, which parse.Options, format.Source and a
// Tracker's Options all carry.
type Summary struct {
	// Enabled folds attempts into per-server counters (Result.Endpoints)
	// instead of returning each of them, so that memory follows the live
	// connections, not the capture's size: established attempts that
	// ended normally (Zeek SF, S1, S2, S3) all, and refused and unanswered
	// ones (REJ, S0) beyond the first FailedSample to each server
	// endpoint, or beyond ten times that to each host, all its ports
	// together, which are kept one by one as evidence. The ports of a host
	// first tried once its sample is full (a scan) are counted per host (a
	// server port of 0, with the ports listed). Attempts an ICMP error
	// answers, attempts inside an overlay and every other outcome are
	// always kept; so many identical ICMP errors or ARP packets are kept
	// as failed attempts to one server, the next counted on the last kept.
	Enabled bool
	// FailedSample is how many refused, and how many unanswered, attempts
	// to one server endpoint are kept one by one: the package's
	// FailedSample when 0, none (but those an ICMP error answers) when
	// negative.
	FailedSample int
}

// sample returns how many failed attempts to one server a summarizing
// tracker keeps one by one.
func (s Summary) sample() int {
	switch {
	case s.FailedSample > 0:
		return s.FailedSample
	case s.FailedSample < 0:
		return 0
	}
	return FailedSample
}

// Result is what a capture yields.
type Result struct {
	Info     model.CaptureInfo
	Attempts []model.Attempt
	// Endpoints sums up, per server endpoint, the attempts folded when
	// Options.Summary.Enabled is set.
	Endpoints []model.EndpointStats
	ICMP      []model.ICMPEvent
	ARP       []model.ARPEvent
}

// Sniff reports whether head starts a packet capture and which container it
// is: "pcap" or "pcapng".
func Sniff(head []byte) (string, bool) { return pcapfile.Sniff(head) }

// ErrNotCapture is returned by Read for input that is not a pcap or pcapng
// file.
var ErrNotCapture = pcapfile.ErrNotCapture

// batchSize is how many decoded packets go from the reading stage to the
// tracking stage at once (a window of pipeline.go); windows end at the
// multiples of batchSize among the packets a tracker is given, and so at
// each sweep (sweepEvery is a multiple of it).
const batchSize = 4096

// maxWindows is how many windows a capture read goes round with: enough
// for one being filled, those queued for the shards and one being
// settled. Going round a few keeps the allocations of a read independent
// of its length, and its memory bounded.
const maxWindows = 8

// maxFrameErrors bounds how many undecodable frames are reported one by
// one; the rest are summed up in a last error.
const maxFrameErrors = 20

// Read reads a whole capture from r: pcap (micro- or nanosecond, either
// byte order) or pcapng (any number of interfaces and sections), either of
// them gzip-compressed. name is used in positions. Problems with single
// frames (undecodable headers, a truncated last record) are returned as a
// model.ErrorList together with everything that could be read; input that
// is not a capture at all gives ErrNotCapture and a nil Result.
func Read(ctx context.Context, r io.Reader, name string, opts Options) (*Result, error) {
	return read(ctx, r, name, opts, false)
}

// read is Read, through gopacket's layers alone when slow is set.
func read(ctx context.Context, r io.Reader, name string, opts Options, slow bool) (*Result, error) {
	t := NewTracker(name, opts)
	t.slowDecode = slow
	t.setShards(opts.shards())
	info, err := feed(ctx, r, name, t)
	if info == nil {
		return nil, err
	}
	res := t.Finish()
	res.Info.Format, res.Info.LinkType, res.Info.Command = info.Format, info.LinkType, info.Command
	return res, err
}

// Input is one file of a rotated capture series.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// ReadSeries reads the files of one capture point, rotated by tcpdump -C or
// -G, as one timeline: the files are read in the order given (oldest first)
// through one tracker, so a connection that spans two files is one attempt.
// Each packet keeps its own file and frame as evidence. The Result's Info
// adds up the files; Infos gives each file's own.
func ReadSeries(ctx context.Context, files []Input, opts Options) (*Result, []model.CaptureInfo, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("capture: empty series")
	}
	t := NewTracker(files[0].Name, opts)
	t.setShards(opts.shards())
	t.series = true
	var errs model.ErrorList
	var infos []model.CaptureInfo
	var links []string
	for _, f := range files {
		rc, err := f.Open()
		if err != nil {
			errs.Add(model.Pos{File: f.Name}, "", err)
			continue
		}
		before := t.counts
		first, last := t.first, t.last
		t.first, t.last = time.Time{}, time.Time{}
		t.file = f.Name
		t.curFile = t.fileIndex(f.Name)
		info, err := feed(ctx, rc, f.Name, t)
		rc.Close()
		errs.Append(err)
		if info == nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, nil, ctxErr
			}
			continue
		}
		info.Node, info.File = opts.Node, f.Name
		info.Counts = t.counts.Sub(before)
		info.Packets = info.Counts.Packets
		info.First, info.Last = t.first, t.last
		infos = append(infos, *info)
		if !slices.Contains(links, info.LinkType) {
			links = append(links, info.LinkType)
		}
		if !first.IsZero() && first.Before(t.first) {
			t.first = first
		}
		if last.After(t.last) {
			t.last = last
		}
	}
	t.file = files[0].Name
	res := t.Finish()
	if len(infos) > 0 {
		res.Info.Format = infos[0].Format
	}
	res.Info.LinkType = strings.Join(links, ", ")
	return res, infos, errs.Err()
}

// feed reads one capture file into t. It returns the file's format, link
// types and command (nil when r is not a capture at all).
func feed(ctx context.Context, r io.Reader, name string, t *Tracker) (*model.CaptureInfo, error) {
	src, err := pcapfile.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer src.Close()
	ng := src.Sections()
	var seenLinks []layers.LinkType
	if !ng {
		seenLinks = append(seenLinks, src.LinkType(0))
	}

	// The stages of pipeline.go: this goroutine reads and decodes frames
	// into windows of prepared packets; t.track folds them.
	var (
		errs    model.ErrorList
		bad     int
		lies    int // records whose original length is below their captured length
		readErr error
	)
	nShards := len(t.shards)
	windows := make(chan *window, 4)
	free := make(chan *window, maxWindows)
	go func() {
		defer close(windows)
		made := 1 // windows made; at most maxWindows are, then they go round
		var (
			d      = decoder{layersOnly: t.slowDecode}
			warned = map[layers.LinkType]bool{}
			w      = newWindow(nShards)
			rec    pcapfile.Record
			p      Packet
			link   layers.LinkType
			iface  = -1
		)
		for frame := 1; ; frame++ {
			if frame&4095 == 0 {
				if err := ctx.Err(); err != nil {
					readErr = err
					return
				}
			}
			err := src.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				errs.Addf(model.Pos{File: name, Frame: frame}, "", "truncated or corrupt packet record: %w", err)
				break
			}
			// A pcapng section starts its interfaces anew: its link
			// types are looked up for every record.
			if rec.Iface != iface || ng {
				iface, link = rec.Iface, src.LinkType(rec.Iface)
				if !slices.Contains(seenLinks, link) {
					seenLinks = append(seenLinks, link)
				}
			}
			// The fast path: a plain TCP segment, read straight into the
			// window.
			cut := rec.Cut()
			if int64(rec.Orig) < int64(len(rec.Data)) {
				if lies++; lies <= maxFrameErrors {
					errs.Addf(model.Pos{File: name, Frame: frame}, "", "capture length %d exceeds the original length %d: the frame is read as captured", len(rec.Data), rec.Orig)
				}
			}
			if g, n := w.nextSeg(); !t.slowDecode && !rec.Wide && t.hotTimes() && hotTCP(link, rec.Data, cut, g) {
				t.prepareHot(g, frame, rec.Unix)
				t.own(w, n)
			} else {
				w.segs = w.segs[:n]
				p = Packet{Pos: model.Pos{Frame: frame}, Time: rec.Time()}
				d.now = p.Time
				if !supportedLink(link) {
					if !warned[link] {
						warned[link] = true
						errs.Addf(model.Pos{File: name, Frame: frame}, "", "%s frames are counted but not decoded", linkName(link))
					}
				} else if err := d.decodeCut(link, rec.Data, cut, &p); err != nil {
					bad++
					if bad <= maxFrameErrors {
						errs.Addf(model.Pos{File: name, Frame: frame}, "", "undecodable frame: %w", err)
					}
				}
				p.quote = -1
				if g, n := w.nextSeg(); t.prepare(&p, g) {
					t.own(w, n)
					if g.lookup {
						p.quote = int32(n)
					}
				} else {
					w.segs = w.segs[:n]
				}
				if p.ICMP != nil || p.ARP != nil || p.Proto == "arp" {
					w.full = append(w.full, p)
				}
			}
			if t.packets%batchSize == 0 {
				t.seal(w)
				windows <- w
				select {
				case w = <-free:
				default:
					if made < maxWindows {
						w, made = newWindow(nShards), made+1
					} else {
						w = <-free
					}
				}
			}
		}
		if len(w.segs) > 0 || len(w.full) > 0 {
			t.seal(w)
			windows <- w
		}
	}()
	t.track(windows, free)
	t.flushCounts()
	if readErr != nil {
		return nil, readErr
	}
	if lies > maxFrameErrors {
		errs.Addf(model.Pos{File: name}, "", "%d more frames whose capture length exceeds their original length", lies-maxFrameErrors)
	}
	if bad > maxFrameErrors {
		errs.Addf(model.Pos{File: name}, "", "%d more undecodable frames", bad-maxFrameErrors)
	}
	info := &model.CaptureInfo{Format: src.Format()}
	if ng {
		ifaces := src.Interfaces() // the last section's
		if len(seenLinks) == 0 && len(ifaces) > 0 {
			seenLinks = append(seenLinks, ifaces[0].Link)
		}
		var filters []string
		for _, f := range ifaces {
			if f.Filter != "" && !slices.Contains(filters, f.Filter) {
				filters = append(filters, f.Filter)
			}
		}
		info.Command = strings.Join(filters, "; ")
	}
	names := make([]string, len(seenLinks))
	for i, l := range seenLinks {
		names[i] = linkName(l)
	}
	info.LinkType = strings.Join(names, ", ")
	return info, errs.Err()
}
