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
	"strings"
	"time"

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

// seriesStem is a capture file's name with its rotation counter or
// timestamp taken out: tcpdump -C writes trace.pcap, trace.pcap1,
// trace.pcap2 ...; -G writes names from a strftime pattern; -z gzip (or
// bzip2, xz, zstd) compresses each file once it is written, the one being
// written still plain. A compression suffix goes, each run of digits
// becomes one '#', and those at the end go. Numbers that name a capture
// point (eth0, node1) are not told here from those that time it (T10 in
// an ISO time, Nov29, cap1764410000): splitGroup tells them apart by the
// files' times. The walk asks it of every file on disk, so it is written
// out rather than a regular expression's replacement.
func seriesStem(path string) string {
	base := trimCompression(filepath.Base(path))
	b := make([]byte, 0, len(base))
	for i := 0; i < len(base); i++ {
		if c := base[i]; !isDigit(c) {
			b = append(b, c)
		} else if i == 0 || !isDigit(base[i-1]) {
			b = append(b, '#')
		}
	}
	return filepath.Join(filepath.Dir(path), strings.TrimRight(string(b), "#"))
}

// trimCompression returns name without the suffix a compressor gives it.
func trimCompression(name string) string {
	for _, ext := range []string{".gz", ".bz2", ".xz", ".zst", ".zstd"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

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
// error when it ended before they were read.
func (o *opener) readRest() error {
	o.readHeld(o.series.take(func(heldCapture) bool { return true }))
	return o.ctx.Err()
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
			return
		}
		o.readGroup(groups[k])
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
	}
	for _, part := range splitGroup(files) {
		held := make([]heldCapture, len(part))
		sf := make([]capture.SeriesFile, len(part))
		for i, f := range part {
			held[i] = f.heldCapture
			sf[i] = capture.SeriesFile{Name: f.name, Head: f.head, Open: func() (io.ReadCloser, error) { return r.open(f.name) }}
		}
		for k := 0; k < len(part) && o.ctx.Err() == nil; {
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

// splitGroup splits files, a group's in the order of their first packets,
// into the parts whose runs are read apart, each in that order: by the
// numbers of their names that name capture points (nameNumbers, those
// whose files interleave in time with the others': eth0-TIME.pcap and
// eth1-TIME.pcap rotated side by side), and then by kind (kindOf), so
// that a file of another kind named alike is read apart, rather than
// cutting a series it falls amid.
func splitGroup(files []groupFile) [][]groupFile {
	var out [][]groupFile
	for _, p := range partition(files, nameKey(files)) {
		out = append(out, partition(p, func(f groupFile) string { return kindOf(f.head) })...)
	}
	return out
}

// nameKey returns the key that tells the capture points of files apart:
// the values of their names' numbers (nameNumbers) at the places where
// the files of each value interleave in time with the others' files. A
// number that times a file (a day, an hour, an epoch) takes a new value
// as time goes on, and its files do not interleave; an interface's or a
// node's does. When the files' names do not all have as many numbers, or
// no place interleaves, every file has one key.
func nameKey(files []groupFile) func(groupFile) string {
	nums := map[string][]string{} // by file name
	n := -1
	for _, f := range files {
		nums[f.name] = nameNumbers(f.name)
		if n >= 0 && len(nums[f.name]) != n {
			return func(groupFile) string { return "" }
		}
		n = len(nums[f.name])
	}
	var places []int
	for k := range max(n, 0) {
		parts := partition(files, func(f groupFile) string { return nums[f.name][k] })
		if len(parts) <= maxNamed && interleaved(parts) {
			places = append(places, k)
		}
	}
	return func(f groupFile) string {
		var b strings.Builder
		for _, k := range places {
			b.WriteString(nums[f.name][k])
			b.WriteByte('|')
		}
		return b.String()
	}
}

// maxNamed is how many capture points one place of a name may tell apart:
// more values are a time's that comes round (the seconds of 10h59m54s),
// whose files interleave too.
const maxNamed = 16

// partition splits files by key, in the order each key first comes, each
// part in the order of files.
func partition(files []groupFile, key func(groupFile) string) [][]groupFile {
	at := map[string]int{}
	var out [][]groupFile
	for _, f := range files {
		k := key(f)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], f)
	}
	return out
}

// interleaved reports whether parts, each in the order of its files'
// first packets, and in the order of their first files', are two or more,
// one of which starts before another's last file does: capture points
// side by side, not one series named by the hour or the day.
func interleaved(parts [][]groupFile) bool {
	var end time.Time // the latest last file's start so far
	for i, p := range parts {
		if i > 0 && p[0].head.First.Before(end) {
			return true
		}
		if last := p[len(p)-1].head.First; last.After(end) {
			end = last
		}
	}
	return false
}

// nameNumbers returns the numbers of a file's name that may name its
// capture point rather than count or time it: each run of digits right
// after a letter inside a word (eth0, node1, ens33, and the 0 and the 3
// of enp0s3), but not after a letter that starts a word (the T10 of
// -T10:59), nor those that end the name (tcpdump -C's counter). Such
// numbers also time a file (Nov29, cap1764410000, 20261129T102144):
// nameKey trusts them only where the files' times say so.
func nameNumbers(path string) []string {
	base := trimCompression(filepath.Base(path))
	end := len(base)
	for end > 0 && isDigit(base[end-1]) {
		end--
	}
	var out []string
	for i := 2; i < end; i++ {
		if !isDigit(base[i]) || !isLetter(base[i-1]) || !(isLetter(base[i-2]) || isDigit(base[i-2])) {
			continue
		}
		j := i
		for j < end && isDigit(base[j]) {
			j++
		}
		out = append(out, base[i:j])
		i = j
	}
	return out
}

// kindOf returns what a capture's head says the files of its series
// share: their format and link types.
func kindOf(h capture.Head) string { return h.Format + "|" + h.LinkType }

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
		if o.ctx.Err() == nil {
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
