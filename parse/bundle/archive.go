package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// tarTree is a tar archive whose (decompressed) stream open returns, with
// the stream's cumulative ratio so far (see boundReader.ratio).
type tarTree struct {
	open func() (io.Reader, func() float64, error)
	b    *budget
}

func (t tarTree) walk(ctx context.Context, fn func(e *entry) error) error {
	r, ratio, err := t.open()
	if err != nil {
		return err
	}
	end := &tarEnd{r: r}
	tr := tar.NewReader(end)
	last := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return end.check(last)
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		last = h.Name
		if t.b.entries++; t.b.entries > t.b.lim.MaxEntries {
			return limitErr("more than %d archive members, counting those of the archives around it (Limits.MaxEntries); rest not read", t.b.lim.MaxEntries)
		}
		name, bad := cleanMember(h.Name)
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: h.Size, link: h.Linkname, bad: bad, scale: ratio()}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeGNUSparse:
			e.kind = entFile
			e.open = func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }
			if sparse(h) {
				e.inflated = true // the holes are read as zeros: bounded like a decompressed stream
				if h.Size > ratioFloor && e.bad == nil {
					e.bad = limitErr("sparse member of %s (its holes read as zeros): refused", human(h.Size))
				}
			}
		case tar.TypeDir:
			e.kind = entDir
		case tar.TypeSymlink:
			e.kind = entSymlink
		case tar.TypeLink:
			e.kind = entHardlink
		case tar.TypeXGlobalHeader:
			continue
		default:
			e.kind = entOther
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// tarEnd reads a tar stream and remembers how it ended: Go's tar reader,
// as GNU tar, takes a stream that stops at a member's boundary for the
// end of the archive, so an archive cut there would read as whole. The
// end is real only when the two zero blocks that end a tar archive were
// read.
type tarEnd struct {
	r io.Reader
	// zeros counts the zero bytes that ended what was read so far.
	zeros int
	// eof says a read returned io.EOF with nothing: the stream ran out
	// where the reader asked for a header.
	eof bool
}

func (t *tarEnd) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for i := n - 1; i >= 0; i-- {
		if p[i] != 0 {
			t.zeros = n - 1 - i
			break
		}
		if i == 0 {
			t.zeros += n
		}
	}
	t.eof = n == 0 && err == io.EOF
	return n, err
}

// check says whether the stream ended with tar's end-of-archive blocks;
// last is the name of the last member read.
func (t *tarEnd) check(last string) error {
	if !t.eof && t.zeros >= 2*512 {
		// Read on to the end of the stream, so that a compressed
		// stream's trailer (gzip's CRC and length) is checked too: a
		// tar reader stops at its end blocks.
		if _, err := io.Copy(io.Discard, t.r); err != nil {
			return fmt.Errorf("tar: the stream past the archive's end blocks: %w", err)
		}
		return nil
	}
	where := "before its first member"
	if last != "" {
		where = "after member " + strconv.Quote(last)
	}
	return fmt.Errorf("tar: %w: the archive ends %s without tar's end-of-archive blocks", io.ErrUnexpectedEOF, where)
}

// sparse reports whether a tar member is a sparse file (GNU's old format,
// or PAX's GNU.sparse records), whose holes the reader fills with zeros.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// zipTree is a zip archive read through an io.ReaderAt: its members, less
// those refused for overlapping others.
type zipTree struct {
	files []*zip.File
	b     *budget
	scale float64 // see boundReader.scale
}

// newZipTree reads the central directory of the zip archive in ra. Members
// whose data overlaps that of another (a zip bomb that points many entries
// at one compressed stream), and second members of the same name, are left
// out: refused tells which, nil when none are. An archive whose members,
// with those counted so far, exceed Limits.MaxEntries is refused whole.
func newZipTree(ra io.ReaderAt, size int64, b *budget) (z zipTree, refused error, err error) {
	// archive/zip holds every entry of the central directory in memory:
	// its count is checked first.
	if n, ok := zipEntries(ra, size); ok && int64(b.entries)+n > int64(b.lim.MaxEntries) {
		return z, nil, limitErr("archive has %d members, more than the %d left of Limits.MaxEntries (counted across nested archives)", n, max(b.lim.MaxEntries-b.entries, 0))
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return z, nil, fmt.Errorf("zip: %w", err)
	}
	if b.entries+len(zr.File) > b.lim.MaxEntries {
		return z, nil, limitErr("archive has %d members, more than the %d left of Limits.MaxEntries (counted across nested archives)", len(zr.File), max(b.lim.MaxEntries-b.entries, 0))
	}
	type span struct {
		start, end int64
		f          *zip.File
	}
	var spans []span
	seen := map[string]bool{}
	var dups, overlaps []string
	keep := make([]*zip.File, 0, len(zr.File))
	for _, f := range zr.File {
		if seen[f.Name] {
			dups = append(dups, f.Name)
			continue
		}
		seen[f.Name] = true
		if off, err := f.DataOffset(); err == nil && f.CompressedSize64 > 0 {
			spans = append(spans, span{off, off + int64(f.CompressedSize64), f})
		}
		keep = append(keep, f)
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	drop := map[*zip.File]bool{}
	end := int64(-1)
	for _, s := range spans {
		if s.start < end {
			drop[s.f] = true
			overlaps = append(overlaps, s.f.Name)
			continue
		}
		end = s.end
	}
	if len(drop) > 0 {
		keep = slices.DeleteFunc(keep, func(f *zip.File) bool { return drop[f] })
	}
	z = zipTree{files: keep, b: b}
	var msgs []string
	if len(overlaps) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d members whose data overlaps another's (%s): refused, likely a zip bomb", len(overlaps), sample(overlaps)))
	}
	if len(dups) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d members named like an earlier one (%s): refused", len(dups), sample(dups)))
	}
	if msgs != nil {
		refused = fmt.Errorf("%w: zip: %s", ErrLimit, strings.Join(msgs, "; "))
	}
	return z, refused, nil
}

// zipEntries reads the number of entries a zip archive's end of central
// directory record (or its zip64 record) declares.
func zipEntries(ra io.ReaderAt, size int64) (int64, bool) {
	const eocdLen, maxComment = 22, 65535
	tail := min(size, eocdLen+maxComment)
	buf := make([]byte, tail)
	if _, err := ra.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return 0, false
	}
	n := int64(binary.LittleEndian.Uint16(buf[i+10:]))
	if n != 0xffff {
		return n, true
	}
	// zip64: the locator just before the record gives the offset of the
	// zip64 end of central directory record, which holds the count.
	const locLen, rec64Len = 20, 56
	if i < locLen || !bytes.HasPrefix(buf[i-locLen:], []byte("PK\x06\x07")) {
		return 0, false
	}
	off := int64(binary.LittleEndian.Uint64(buf[i-locLen+8:]))
	rec := make([]byte, rec64Len)
	if off < 0 || off > size-rec64Len {
		return 0, false
	}
	if _, err := ra.ReadAt(rec, off); err != nil || !bytes.HasPrefix(rec, []byte("PK\x06\x06")) {
		return 0, false
	}
	return int64(min(binary.LittleEndian.Uint64(rec[32:]), 1<<62)), true
}

// sample quotes the first names of a list, for a warning.
func sample(names []string) string {
	const n = 3
	q := make([]string, 0, n+1)
	for _, s := range names[:min(len(names), n)] {
		q = append(q, strconv.Quote(s))
	}
	if len(names) > n {
		q = append(q, "...")
	}
	return strings.Join(q, ", ")
}

func (z zipTree) walk(ctx context.Context, fn func(e *entry) error) error {
	for _, f := range z.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if z.b.entries++; z.b.entries > z.b.lim.MaxEntries {
			return limitErr("more than %d archive members, counting those of the archives around it (Limits.MaxEntries); rest not read", z.b.lim.MaxEntries)
		}
		name, bad := cleanMember(strings.ReplaceAll(f.Name, "\\", "/"))
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: int64(f.UncompressedSize64), bad: bad, scale: z.scale}
		mode := f.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			e.kind = entDir
		case mode&fs.ModeSymlink != 0:
			e.kind = entSymlink
			if rc, err := f.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 4096))
				rc.Close()
				e.link = string(b)
			}
		case mode.IsRegular():
			e.kind = entFile
			e.inflated = true
			e.packed = int64(f.CompressedSize64)
			f := f
			e.open = func() (io.ReadCloser, error) {
				if f.CompressedSize64 > 0 && int64(f.UncompressedSize64) > ratioFloor &&
					int64(f.UncompressedSize64/f.CompressedSize64) > z.b.lim.MaxRatio {
					return nil, limitErr("member declares %d times its compressed size (Limits.MaxRatio): likely a decompression bomb; not read", f.UncompressedSize64/f.CompressedSize64)
				}
				return f.Open()
			}
		default:
			e.kind = entOther
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
