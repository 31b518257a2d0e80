package bundle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// A rotated capture series (tcpdump -C or -G: the files of one capture
// point, each starting where the one before ended) is read as one
// timeline, so that a connection that crosses a file boundary is one
// attempt, and it is read once. A capture on disk that may be one of a
// series (another file of its directory walked, or another path given to
// OpenAll, has its name but for its digits) is set aside rather than read
// (hold). Once every file of its name is set aside, or else once the
// walk is over, the files set aside of one node and one name are read
// together in the order of their first packets (readHeld,
// capture.ReadRotated), each run of them that follow each other as
// tcpdump writes them as one series: files of a name taken at once
// (captures of several interfaces or nodes named alike), and files of no
// packet, are runs of one, each read as any other capture is. A run ends
// before reading a file that does not follow, so that attempts handed on
// (Options.EachAttempt) are handed on once, as the series' or as the
// file's own. Captures inside archives are read where they are found.

// seriesHold is what hold sets aside, shared by the openers of the paths
// of one OpenAll.
type seriesHold struct {
	held []heldCapture
	// seen counts the files on disk the walk has met, by seriesKey.
	seen map[string]int
	// operands counts OpenAll's paths by series stem: a file given as a
	// path is one of a series only with others given.
	operands map[string]int
	// dirs counts the regular files of each directory walked on disk by
	// series stem, those of two files or more (countStems).
	dirs map[string]map[string]int
}

// heldCapture is a capture file on disk set aside to be read with the
// other files of its series.
type heldCapture struct {
	name, stem string
	key        string // its seriesKey
	pl         placement
}

// seriesKey says which files a file on disk may be one series with, and
// how many there are: those given as paths of its series stem, or those
// of its directory of its stem.
func (h *seriesHold) seriesKey(name string, pl placement) (key, stem string, n int) {
	stem = seriesStem(name)
	if pl.direct {
		return "path|" + stem, stem, h.operands[stem]
	}
	return "dir|" + stem, stem, h.dirs[filepath.Dir(name)][stem]
}

// countStems counts, from the index of a directory tree on disk whose
// files are named by name, the regular files of each of its directories
// by series stem. Only the stems of several files are kept: a bundle's
// directories hold hundreds of thousands of files, most of a name of
// their own.
func (h *seriesHold) countStems(ix *index, name func(string) string) {
	dirs := map[string]map[string]int{}
	for n, kind := range ix.kinds {
		if kind != entFile {
			continue
		}
		full := name(n)
		dir := filepath.Dir(full)
		if dirs[dir] == nil {
			dirs[dir] = map[string]int{}
		}
		dirs[dir][seriesStem(full)]++
	}
	if h.dirs == nil {
		h.dirs = map[string]map[string]int{}
	}
	for dir, stems := range dirs {
		maps.DeleteFunc(stems, func(_ string, n int) bool { return n < 2 })
		if len(stems) > 0 {
			h.dirs[dir] = stems
		}
	}
}

// hold sets the file name aside, for readHeld, when it is a pcap or
// pcapng file on disk (pl.disk) that may be one of a rotated series, and
// reports whether it did: given as a path, when another path has its
// series stem; found in a directory, when another regular file there
// has. bound, when set, is what decompressed the file's head: the file is
// decompressed again when read, and counts once in the bundle's total.
func (o *opener) hold(name string, f *format.Format, pl placement, bound *boundReader) bool {
	if !pl.disk || !o.settingAside() || f.Kind != model.KindCapture || f.Name != "pcap" {
		return false
	}
	key, stem, n := o.series.seriesKey(name, pl)
	if n < 2 {
		return false
	}
	o.series.held = append(o.series.held, heldCapture{name: name, stem: stem, key: key, pl: pl})
	bound.refund()
	return true
}

// met notes that the walk has met the file on disk name, set aside or
// not: once it has met every file of the file's seriesKey, the captures
// of the key set aside are read, there, in the walk's order.
func (o *opener) met(name string, pl placement) {
	if !o.settingAside() {
		return
	}
	h := o.series
	key, _, n := h.seriesKey(name, pl)
	if n < 2 {
		return
	}
	if h.seen == nil {
		h.seen = map[string]int{}
	}
	if h.seen[key]++; h.seen[key] >= n {
		o.readHeld(h.take(func(c heldCapture) bool { return c.key == key }))
	}
}

// settingAside reports whether captures are set aside now: not while one
// set aside is read alone.
func (o *opener) settingAside() bool { return !o.readingHeld }

// readRest reads the captures still set aside, and returns the context's
// error when it stopped their read (stopErr).
func (o *opener) readRest() error {
	o.readHeld(o.series.take(func(heldCapture) bool { return true }))
	return o.stopErr()
}

// take removes the captures held that match from those held, and returns
// them.
func (h *seriesHold) take(match func(heldCapture) bool) []heldCapture {
	var out []heldCapture
	h.held = slices.DeleteFunc(h.held, func(c heldCapture) bool {
		if match(c) {
			out = append(out, c)
			return true
		}
		return false
	})
	return out
}

// readHeld reads captures hold set aside: those of one node and one
// series stem as one series when they follow each other in time, the
// others one by one.
func (o *opener) readHeld(held []heldCapture) {
	groups := map[string][]heldCapture{}
	var keys []string
	for _, h := range held {
		k := h.pl.node + "|" + h.stem
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], h)
	}
	for _, k := range keys {
		if o.ctx.Err() != nil {
			o.cutBefore(groups[k])
			continue
		}
		o.readGroup(groups[k])
	}
}

// cutBefore names the captures held as not read, the run cut short
// before them.
func (o *opener) cutBefore(held []heldCapture) {
	for _, h := range held {
		o.skip(h.name, model.SkippedCutShort, h.pl)
	}
}

// readGroup reads the files of one node and one series stem: first,
// alone, a file whose first record cannot be read (which says why) and a
// file of no packet; then, for each format and link type, in the order of
// their first packets, each run of files that follow each other as one
// series (capture.ReadRotated), a file that follows no other (a run of
// one) as any capture reads.
func (o *opener) readGroup(g []heldCapture) {
	if len(g) == 1 {
		o.readAlone(g[0])
		return
	}
	var files []groupFile
	for _, h := range g {
		head, err := o.head(h.name)
		if err != nil || head.First.IsZero() {
			// Corrupt, or cut short, read alone, it says where; or of no
			// packet (tcpdump -G writes one when none came), a series of
			// none.
			o.readAlone(h)
			continue
		}
		files = append(files, groupFile{h, head})
	}
	slices.SortStableFunc(files, func(a, b groupFile) int { return a.head.First.Compare(b.head.First) })
	r := &seriesRun{o: o, bounds: map[string]*boundReader{}, trailers: map[string]error{}}
	r.opts = capture.Options{Node: g[0].pl.node}
	if o.opts != nil {
		r.opts.Summary, r.opts.EachAttempt, r.opts.LendAttempts = o.opts.Summary, o.opts.EachAttempt, o.opts.LendAttempts
		r.opts.EachRow = o.opts.EachRow
	}
	for _, part := range splitGroup(files) {
		held := make([]heldCapture, len(part))
		sf := make([]capture.SeriesFile, len(part))
		for i, f := range part {
			held[i] = f.heldCapture
			sf[i] = capture.SeriesFile{Name: f.name, Head: f.head, Open: func() (io.ReadCloser, error) { return r.open(f.name) }}
		}
		for k := 0; k < len(part); {
			if o.ctx.Err() != nil {
				o.cutBefore(held[k:])
				break
			}
			if k == len(part)-1 {
				o.readAlone(held[k])
				break
			}
			k += r.read(held[k:], sf[k:])
		}
	}
}

// groupFile is a file of a group, with its head.
type groupFile struct {
	heldCapture
	head capture.Head
}

// seriesRun reads the runs of files of a group (readGroup).
type seriesRun struct {
	o        *opener
	opts     capture.Options
	bounds   map[string]*boundReader // what decompressed each file read
	trailers map[string]error        // what checking each file's trailer found (trailerErr)
}

// open opens the file name of the group, set aside, for its run to read.
func (r *seriesRun) open(name string) (io.ReadCloser, error) {
	rc, bound, err := r.o.openHeld(name)
	r.bounds[name] = bound
	if err != nil {
		return nil, err
	}
	return trailerCloser{rc, func() { r.trailers[name] = r.o.trailerErr(rc, bound) }}, nil
}

// read reads the run of files at the head of files (sf, the same as
// capture.SeriesFiles) and returns how many files it read. When the
// reader fails, files are read one by one.
func (r *seriesRun) read(files []heldCapture, sf []capture.SeriesFile) int {
	o := r.o
	res, infos, n, err := readRotated(o.ctx, sf, r.opts)
	if res == nil {
		if o.ctx.Err() != nil {
			o.cutBefore(files) // cut short before the run's first frame
		} else {
			// A fault of the reader: said once, and the files read one by
			// one, each as any capture (a fault of the file's own is then
			// said at it, as a parser's).
			o.warns.Add(model.Pos{File: files[0].name}, "", fmt.Errorf("%w; this file and those after it in its series are read one by one", err))
			for _, f := range files {
				o.readAlone(f)
			}
		}
		return len(files)
	}
	run := files[:n]
	var errs model.ErrorList
	errs.Append(err)
	for _, f := range run {
		lerr := r.bounds[f.name].limitHit()
		switch {
		case lerr == nil:
			addTrailerErr(f.name, r.trailers[f.name], &errs)
		case !slices.ContainsFunc(errs, func(e *model.Error) bool { return e.Pos.File == f.name && errors.Is(e.Err, ErrLimit) }):
			errs.Add(model.Pos{File: f.name}, "", lerr)
		}
	}
	o.warns = append(o.warns, errs...)
	o.snap.Captures = append(o.snap.Captures, infos...)
	capture.AddTo(o.snap, res)
	read := map[string]*model.CaptureInfo{}
	for i := range infos {
		read[infos[i].File] = &infos[i]
	}
	for _, f := range run {
		in := model.Input{Path: f.name, Format: "pcap", Kind: model.KindCapture, Node: f.pl.node, Layout: f.pl.layout,
			Command: f.pl.command}
		if len(run) > 1 {
			in.Details = map[string]int{"series_files": len(run)}
		}
		if info := read[f.name]; info != nil {
			in.Format, in.Records = info.Format, info.Packets
		}
		for _, e := range errs {
			if e.Pos.File == f.name {
				in.Warnings++
			}
		}
		o.add(in)
	}
	return n
}

// readRotated is capture.ReadRotated, with a panic turned into an error
// and no Result, as runParser turns a parser's: one reader's bug must not
// stop the bundle.
func readRotated(ctx context.Context, sf []capture.SeriesFile, opts capture.Options) (res *capture.Result, infos []model.CaptureInfo, n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("the capture series reader failed: %v\n%s", v, debug.Stack())
		}
	}()
	return rotatedReader(ctx, sf, opts)
}

// rotatedReader is capture.ReadRotated; a variable so that a test can
// make it fail.
var rotatedReader = capture.ReadRotated

// trailerCloser is a capture file of a series, which, closed once read,
// first checks its trailer (trailerErr) as any file's is.
type trailerCloser struct {
	io.ReadCloser
	check func()
}

func (t trailerCloser) Close() error {
	t.check()
	return t.ReadCloser.Close()
}

// openHeld opens the capture file name, set aside, decompressed as the
// walk decompresses it (Limits.MaxFileBytes, the bundle's total), and
// returns it with the bound on what it decompresses (nil for a file not
// compressed).
func (o *opener) openHeld(name string) (io.ReadCloser, *boundReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(ctxReader{o.ctx, f}, magicSize)
	head, _ := br.Peek(magicSize)
	c := compressionOf(head)
	if c == noCompression {
		return readCloser{br, f}, nil, nil
	}
	zr, err := decompress(c, br, o.bud, o.bud.lim.MaxFileBytes, head)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return readCloser{zr, f}, zr, nil
}

// readCloser reads from one reader and closes a file.
type readCloser struct {
	io.Reader
	f *os.File
}

func (r readCloser) Close() error { return r.f.Close() }

// head returns what the head of the capture file name, set aside, tells
// (capture.ReadHead).
func (o *opener) head(name string) (capture.Head, error) {
	rc, bound, err := o.openHeld(name)
	if err != nil {
		return capture.Head{}, err
	}
	defer rc.Close()
	defer bound.refund() // its head is decompressed again when it is read
	return capture.ReadHead(rc)
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
