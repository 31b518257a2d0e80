// Package capture reads packet captures into the evidence netmortem
// reasons about: TCP connection attempts with their handshake outcome, ICMP
// errors, and ARP claims, each with the frame numbers (or lines) that prove
// it. It reads capture files (pcap and pcapng, optionally gzip-compressed),
// rotated series of them, and tcpdump or tshark text pasted from a
// terminal, and quotes single frames for the reports.
//
// It is the package to call; the work is done by four others, as
// gopacket splits pcapgo, layers and reassembly: pcapfile reads the
// records of capture files (hand-written; no cgo, no libpcap), decode
// turns frames into packets and TCP segments, track folds them into
// attempts (Tracker, sharded across cores), and text reads pasted
// captures. The reader streams: it never holds the capture's packets, so
// memory follows the number of live connections, not the file size.
package capture

import (
	"context"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/capture/text"
	"github.com/netmortem/netmortem/capture/track"
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
	// EachAttempt, when set, is handed the attempts one by one, in the
	// order Result.Attempts would list them, as their connections end,
	// and Result.Attempts stays empty: memory then follows the live
	// connections, not the capture's size (see track.Options). ReadText
	// hands on each node's attempts after the previous node's.
	EachAttempt func(model.Attempt)
	// LendAttempts, with EachAttempt, lends the attempts: each, with the
	// segments and data sizes it points to, is EachAttempt's only until it
	// returns (see track.Options.LendAttempts).
	LendAttempts bool
	// EachRow, when set, is handed each attempt's row instead of
	// EachAttempt the attempt, worked out without building it (see
	// track.Options.EachRow).
	EachRow func(*model.Row)
}

// Summary says whether a capture's attempts are summarized and how: the
// one setting of summary mode, which parse.Options, format.File and a
// track.Tracker's Options all carry. See track.Summary.
type Summary = track.Summary

// Result is what a capture yields: its information, attempts, per-server
// counters in summary mode, ICMP errors and ARP claims. See track.Result.
type Result = track.Result

// AddTo adds what res holds to snap: its attempts, endpoint counters,
// ICMP errors, ARP claims and bad checksums. Its CaptureInfo is the
// caller's to add: Result.Info for a capture, each file's own for a
// series (ReadSeries). A snapshot without attempts takes res's as they
// are: a large capture's attempts are not copied.
func AddTo(snap *model.Snapshot, res *Result) {
	if len(snap.Attempts) == 0 {
		snap.Attempts = res.Attempts
	} else {
		snap.Attempts = append(snap.Attempts, res.Attempts...)
	}
	snap.EndpointStats = append(snap.EndpointStats, res.Endpoints...)
	snap.ICMP = append(snap.ICMP, res.ICMP...)
	snap.ARP = append(snap.ARP, res.ARP...)
	snap.BadChecksums = append(snap.BadChecksums, res.BadChecksums...)
}

// FailedSample is how many refused, and how many unanswered, attempts to
// one server endpoint summary mode keeps one by one before it counts the
// rest, when Summary.FailedSample is 0.
const FailedSample = track.FailedSample

// Sniff reports whether head starts a packet capture and which container it
// is: "pcap" or "pcapng".
func Sniff(head []byte) (string, bool) { return pcapfile.Sniff(head) }

// ErrNotCapture is returned by Read for input that is not a pcap or pcapng
// file.
var ErrNotCapture = pcapfile.ErrNotCapture

// maxFrameErrors bounds how many undecodable frames are reported one by
// one; the rest are summed up in a last error.
const maxFrameErrors = 20

// Read reads a whole capture from r: pcap (micro- or nanosecond, either
// byte order) or pcapng (any number of interfaces and sections), either of
// them gzip-compressed. name is used in positions. Problems with single
// frames (undecodable headers, a truncated last record) are returned as a
// model.ErrorList together with everything that could be read; input that
// is not a capture at all gives ErrNotCapture and a nil Result. A read
// whose ctx ends is cut short there: the Result holds the frames before,
// and the error, which wraps ctx.Err() and model.ErrStopped, names the
// first frame not read (ended before the capture's header is read, it
// gives no Result).
func Read(ctx context.Context, r io.Reader, name string, opts Options) (*Result, error) {
	return read(ctx, r, name, opts, decodeAll)
}

// decoding is which of feed's paths decode frames; the tests hold the
// paths to the same results.
type decoding int

const (
	decodeAll     decoding = iota // every path: plain records, hand-decoded headers, gopacket
	decodeRecords                 // each record read and handed on alone (no Stage.HotPcap)
	decodeLayers                  // gopacket's layers alone
)

// read is Read through the decoding paths mode allows.
func read(ctx context.Context, r io.Reader, name string, opts Options, mode decoding) (*Result, error) {
	t := track.NewTracker(name, opts.trackOptions())
	t.SetShards(opts.shards())
	info, err := feed(ctx, r, name, t, mode)
	if info == nil {
		return nil, err
	}
	res := t.Finish()
	res.Info.Format, res.Info.LinkType, res.Info.Command = info.Format, info.LinkType, info.Command
	if far := t.FarTimes(); far != nil {
		var errs model.ErrorList
		errs.Append(err)
		errs.Append(far)
		err = errs
	}
	return res, err
}

// trackOptions returns the options of the Tracker a read with o folds packets in.
func (o Options) trackOptions() track.Options {
	return track.Options{Node: o.Node, Summary: o.Summary, EachAttempt: o.EachAttempt, LendAttempts: o.LendAttempts,
		EachRow: o.EachRow}
}

// shards returns how many shards a capture read with o is tracked by.
func (o Options) shards() int {
	if o.Shards > 0 {
		return o.Shards
	}
	return runtime.GOMAXPROCS(0)
}

// plainMiss is how many records feed reads one at a time after one
// Stage.HotPcap does not take.
const plainMiss = 64

// feed reads one capture file into t through the decoding paths mode
// allows. It returns the file's format, link types and command (nil
// when r is not a capture at all).
func feed(ctx context.Context, r io.Reader, name string, t *track.Tracker, mode decoding) (*model.CaptureInfo, error) {
	src, err := pcapfile.NewReader(r)
	if err != nil {
		// At the file's position: a caller that places the errors in
		// their file does not name it twice.
		return nil, &model.Error{Pos: model.Pos{File: name}, Err: err}
	}
	defer src.Close()
	ng := src.Sections()
	var seenLinks []layers.LinkType
	if !ng {
		seenLinks = append(seenLinks, src.LinkType(0))
	}

	// This goroutine's read function decodes frames for the stages of
	// track.Tracker.Feed, which fold them.
	var (
		errs model.ErrorList
		bad  int
		lies int // records whose original length is below their captured length
		// stopped is the frame reading stopped before when the context
		// was done, 0 if it was not: what came before is kept.
		stopped int
	)
	readErr := t.Feed(func(s *track.Stage) error {
		var (
			d      = decode.Decoder{LayersOnly: mode == decodeLayers}
			warned = map[layers.LinkType]bool{}
			rec    pcapfile.Record
			p      decode.Packet
			link   layers.LinkType
			iface  = -1
			// A little-endian classic pcap file has its plain TCP
			// segments taken straight from the read buffer, a run at a
			// time (Stage.HotPcap), from frame plainAt on: after a
			// record it does not take, the next plainMiss go one at a
			// time, so that a capture of other frames pays little for
			// trying.
			plain   = mode == decodeAll && !ng && decode.SupportedLink(src.LinkType(0))
			plainAt = 1
			// The context is checked every 4,096 frames read one at a
			// time; a run takes at most a window's 4,096 more.
			checkAt = 4096
		)
		for frame := 1; ; frame++ {
			if frame >= checkAt {
				if ctx.Err() != nil {
					// Stopped, unless the capture ends here: frame is
					// the first not read only if there is one.
					if err := src.Next(&rec); err != io.EOF {
						stopped = frame
					}
					return nil
				}
				checkAt = frame + 4096
			}
			if plain && frame >= plainAt {
				b, nano := src.Plain()
				if used, took := s.HotPcap(src.LinkType(0), b, nano, frame); took > 0 {
					src.Skip(used)
					frame += took - 1
					continue
				}
				switch {
				case nano == 0:
					plain = false // big-endian
				case len(b) > 0:
					plainAt = frame + plainMiss
				}
				// With nothing buffered (the file's first record, a
				// refill), Next reads on and the next frame tries again.
			}
			err := src.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					stopped = frame // cut short, not corrupt
					return nil
				}
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
			cut := rec.Cut()
			if int64(rec.Orig) < int64(len(rec.Data)) {
				if lies++; lies <= maxFrameErrors {
					errs.Addf(model.Pos{File: name, Frame: frame}, "", "capture length %d exceeds the original length %d: the frame is read as captured", len(rec.Data), rec.Orig)
				}
			}
			// The fast path: a plain TCP segment, read straight into the
			// window.
			if mode != decodeLayers && !rec.Wide && s.Hot(link, rec.Data, cut, frame, rec.Unix) {
				continue
			}
			p = decode.Packet{Pos: model.Pos{Frame: frame}, Time: rec.Time()}
			if !decode.SupportedLink(link) {
				if !warned[link] {
					warned[link] = true
					errs.Addf(model.Pos{File: name, Frame: frame}, "", "%s frames are counted but not decoded", decode.LinkName(link))
				}
			} else if err := d.Decode(link, rec.Data, cut, &p); err != nil {
				bad++
				if bad <= maxFrameErrors {
					errs.Addf(model.Pos{File: name, Frame: frame}, "", "undecodable frame: %w", err)
				}
			}
			s.Add(&p)
		}
		return nil
	})
	if readErr != nil {
		return nil, readErr
	}
	if stopped > 0 {
		errs = append(errs, model.Stopped(model.Pos{File: name, Frame: stopped}, ctx.Err()))
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
		names[i] = decode.LinkName(l)
	}
	info.LinkType = strings.Join(names, ", ")
	return info, errs.Err()
}

// Text formats of pasted packet listings, as SniffText names them and
// ReadText takes them.
const (
	FormatTcpdumpText = text.Tcpdump // tcpdump's output
	FormatTsharkText  = text.Tshark  // tshark's or Wireshark's packet list
)

// SniffText reports whether head looks like pasted packet text and which:
// FormatTcpdumpText (tcpdump -nn output, with or without -v, -e, -tttt, -A)
// or FormatTsharkText (tshark / Wireshark packet list), with a score from 0
// to 100 as parse.Format.Sniff wants it.
func SniffText(head []byte) (string, int) { return text.Sniff(head) }

// ReadText reads pasted tcpdump or tshark text (format is FormatTcpdumpText
// or FormatTsharkText) into the same attempts, ICMP events and ARP claims a
// pcap of the same packets gives, with line numbers (and, for tshark, the
// frame numbers it printed) as evidence: one Result per node the text
// shows (see text.Read). opts.Shards is not used.
func ReadText(ctx context.Context, r io.Reader, name, format string, opts Options) ([]*Result, error) {
	return text.Read(ctx, r, name, format, opts.trackOptions())
}
