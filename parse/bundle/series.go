package bundle

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// A rotated capture series (tcpdump -C or -G: the files of one capture
// point, each starting where the one before ended) is read as one
// timeline, so that a connection that crosses a file boundary is one
// attempt, and it is read once. A capture on disk whose directory holds
// another file of the same name but for its digits is set aside rather
// than read (hold); once the walk is over, the files set aside of one node
// and one name are read together in the order of their first packets
// (readHeld, capture.ReadRotated). A file alone, the files of a name that
// do not follow each other in time (captures of several interfaces or
// nodes named alike), and a file that is not a capture as it lies on disk
// (compressed otherwise than with gzip) are read one by one, as any other
// capture is. Captures inside archives are read where they are found.

var digitsRe = lazyre.New(`[0-9]+`)

// seriesStem is a capture file's name with its rotation counter or
// timestamp taken out: tcpdump -C writes trace.pcap, trace.pcap1,
// trace.pcap2 ...; -G writes names from a strftime pattern.
func seriesStem(path string) string {
	stem := digitsRe.ReplaceAllString(filepath.Base(path), "#")
	return filepath.Join(filepath.Dir(path), strings.TrimRight(stem, "#"))
}

// heldCapture is a capture file on disk set aside to be read with the
// other files of its series.
type heldCapture struct {
	name string
	pl   placement
}

// hold sets the file name aside, for readHeld, when it is a pcap or
// pcapng file on disk (pl.disk) that may be one of a rotated series: its
// directory holds another regular file of its series stem. It reports
// whether it did. Nothing is set aside when the attempts are handed on
// (Options.EachAttempt): each file's are then its own.
func (o *opener) hold(name string, f *format.Format, pl placement) bool {
	if !pl.disk || o.readingHeld || f.Kind != model.KindCapture || f.Name != "pcap" ||
		(o.opts != nil && o.opts.EachAttempt != nil) {
		return false
	}
	dir := filepath.Dir(name)
	stems, ok := o.stems[dir]
	if !ok {
		stems = map[string]int{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Type().IsRegular() {
				stems[seriesStem(filepath.Join(dir, e.Name()))]++
			}
		}
		if o.stems == nil {
			o.stems = map[string]map[string]int{}
		}
		o.stems[dir] = stems
	}
	if stems[seriesStem(name)] < 2 {
		return false
	}
	o.held = append(o.held, heldCapture{name: name, pl: pl})
	return true
}

// readHeld reads the captures hold set aside: those of one node and one
// series stem as one series when they follow each other in time, the
// others one by one.
func (o *opener) readHeld(held []heldCapture) {
	groups := map[string][]heldCapture{}
	var keys []string
	for _, h := range held {
		k := h.pl.node + "|" + seriesStem(h.name)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], h)
	}
	for _, k := range keys {
		if o.ctx.Err() != nil {
			return
		}
		o.readGroup(groups[k])
	}
}

// readGroup reads the files of one node and one series stem.
func (o *opener) readGroup(g []heldCapture) {
	type file struct {
		heldCapture
		first time.Time
	}
	if len(g) == 1 {
		o.readAlone(g[0])
		return
	}
	var files []file
	for _, h := range g {
		first, err := firstTime(h.name)
		if err != nil {
			// Not a capture as it lies on disk (xz, bzip2, zstd).
			o.readAlone(h)
			continue
		}
		files = append(files, file{h, first})
	}
	switch len(files) {
	case 0:
		return
	case 1:
		o.readAlone(files[0].heldCapture)
		return
	}
	slices.SortStableFunc(files, func(a, b file) int { return a.first.Compare(b.first) })
	sf := make([]capture.SeriesFile, len(files))
	for i, f := range files {
		sf[i] = capture.SeriesFile{Name: f.name, First: f.first,
			Open: func() (io.ReadCloser, error) { return os.Open(f.name) }}
	}
	copts := capture.Options{Node: files[0].pl.node}
	if o.opts != nil {
		copts.Summary = o.opts.Summary
	}
	res, infos, err := capture.ReadRotated(o.ctx, sf, copts)
	if errors.Is(err, capture.ErrNotRotated) {
		// Not one series: each file as it was set aside, in the walk's
		// order.
		for _, h := range g {
			if slices.ContainsFunc(files, func(f file) bool { return f.name == h.name }) {
				o.readAlone(h)
			}
		}
		return
	}
	if res == nil {
		o.warns.Append(err)
		return
	}
	var errs model.ErrorList
	errs.Append(err)
	o.warns = append(o.warns, errs...)
	s := o.snap
	s.Captures = append(s.Captures, infos...)
	s.Attempts = append(s.Attempts, res.Attempts...)
	s.EndpointStats = append(s.EndpointStats, res.Endpoints...)
	s.ICMP = append(s.ICMP, res.ICMP...)
	s.ARP = append(s.ARP, res.ARP...)
	s.BadChecksums = append(s.BadChecksums, res.BadChecksums...)
	read := map[string]*model.CaptureInfo{}
	for i := range infos {
		read[infos[i].File] = &infos[i]
	}
	for _, f := range files {
		in := model.Input{Path: f.name, Kind: model.KindCapture, Node: f.pl.node, Layout: f.pl.layout,
			Command: f.pl.command, Details: map[string]int{"series_files": len(files)}}
		if info := read[f.name]; info != nil {
			in.Format, in.Records = info.Format, info.Packets
		} else {
			in.Format = "pcap"
		}
		for _, e := range errs {
			if e.Pos.File == f.name {
				in.Warnings++
			}
		}
		o.add(in)
	}
}

// firstTime returns the time of the first record of the capture file
// name, read as it lies on disk.
func firstTime(name string) (time.Time, error) {
	f, err := os.Open(name)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	return capture.FirstTime(f)
}

// readAlone reads the capture h, set aside, as any other file.
func (o *opener) readAlone(h heldCapture) {
	f, err := os.Open(h.name)
	if err != nil {
		o.warns.Add(model.Pos{File: h.name}, "", err)
		o.skip(h.name, err.Error(), h.pl)
		return
	}
	defer f.Close()
	o.readingHeld = true
	defer func() { o.readingHeld = false }()
	o.file(input{name: h.name, r: f, pl: h.pl, scale: 1})
}
