package timeline

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/netmortem/netmortem/capture"
	"github.com/ulikunitz/xz"
)

// MaxNestedArchive bounds the size of an archive inside an archive that
// Quotes reads into memory to reach its members (a zip needs random
// access); members of larger ones are not quoted.
const MaxNestedArchive = 64 << 20

// want is what Quotes needs of one file: lines, frames, or, for an
// archive, what it needs of its members (by member path).
type want struct {
	lines  []int
	frames []int
	sub    map[string]*want
}

// quoted is what was read: the text of each line and frame of each file
// (by the file's name as positions give it), and the errors that stopped
// reading a file's lines or frames.
type quoted struct {
	lines     map[string]map[int]string
	frames    map[string]map[int]string
	lineErrs  map[string]error
	frameErrs map[string]error
}

func newQuoted() *quoted {
	return &quoted{lines: map[string]map[int]string{}, frames: map[string]map[int]string{},
		lineErrs: map[string]error{}, frameErrs: map[string]error{}}
}

// splitMember splits a position's file into the path on disk and the
// member paths inside archives, as parse names them ("bundle.tgz!dir/f").
func splitMember(file string) []string {
	return strings.Split(file, "!")
}

// cleanMember is a member path as compared: slashes, no "./".
func cleanMember(name string) string {
	name = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(name, "\\", "/")), "/")
	return name
}

// readFile reads what w needs of the file on disk at name.
func readFile(ctx context.Context, name string, w *want, q *quoted) {
	// Not opened unless regular: opening a named pipe would wait for a
	// writer.
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		q.fail(name, w, err)
		return
	}
	f, err := os.Open(name)
	if err != nil {
		q.fail(name, w, err)
		return
	}
	defer f.Close()
	readStream(ctx, name, f, f, w, q)
}

// fail records err for the file name and every member w needs of it.
func (q *quoted) fail(name string, w *want, err error) {
	q.lineErrs[name], q.frameErrs[name] = err, err
	for m, sw := range w.sub {
		q.fail(name+"!"+m, sw, err)
	}
}

// readStream reads what w needs of one file's content r (ra, when not
// nil, reads the same content at random, for a zip on disk).
func readStream(ctx context.Context, name string, r io.Reader, ra io.ReaderAt, w *want, q *quoted) {
	br := bufio.NewReaderSize(r, 64<<10)
	dr, compressed, err := decompressed(br)
	if err != nil {
		q.fail(name, w, err)
		return
	}
	if dr != nil {
		defer dr.Close()
		br = bufio.NewReaderSize(dr, 64<<10)
	}
	if compressed {
		ra = nil
	}
	if len(w.sub) > 0 {
		readArchive(ctx, name, br, ra, w, q)
		return
	}
	// A capture's frames are decoded, a text file's lines read.
	head, _ := br.Peek(4)
	if _, isCapture := capture.Sniff(head); isCapture {
		texts, err := capture.Frames(ctx, br, w.frames)
		q.frames[name] = texts
		q.frameErrs[name] = err
		q.lineErrs[name] = errors.New("a packet capture has no lines")
		return
	}
	texts, err := readLines(ctx, br, w.lines)
	q.lines[name] = texts
	q.lineErrs[name] = err
	q.frameErrs[name] = capture.ErrNotCapture
}

// decompressed returns a reader of br's content decompressed, when it is
// compressed (gzip, xz, bzip2, zstd), and whether it was.
func decompressed(br *bufio.Reader) (io.ReadCloser, bool, error) {
	head, _ := br.Peek(10)
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, true, fmt.Errorf("gzip: %w", err)
		}
		return zr, true, nil
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		xr, err := xz.NewReader(br)
		if err != nil {
			return nil, true, fmt.Errorf("xz: %w", err)
		}
		return io.NopCloser(xr), true, nil
	case len(head) >= 10 && bytes.HasPrefix(head, []byte("BZh")) &&
		bytes.Equal(head[4:10], []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}):
		return io.NopCloser(bzip2.NewReader(br)), true, nil
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, true, fmt.Errorf("zstd: %w", err)
		}
		return zr.IOReadCloser(), true, nil
	}
	return nil, false, nil
}

// readArchive reads the members w needs of the tar or zip archive br.
func readArchive(ctx context.Context, name string, br *bufio.Reader, ra io.ReaderAt, w *want, q *quoted) {
	head, _ := br.Peek(512)
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) {
		readZip(ctx, name, br, ra, w, q)
		return
	}
	if len(head) < 262 || !bytes.Equal(head[257:262], []byte("ustar")) {
		q.fail(name, w, errors.New("not a tar or zip archive"))
		return
	}
	left := len(w.sub)
	done := map[string]bool{}
	tr := tar.NewReader(br)
	for left > 0 {
		if err := ctx.Err(); err != nil {
			q.fail(name, w, err)
			return
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			q.fail(name, w, fmt.Errorf("tar: %w", err))
			return
		}
		m := cleanMember(h.Name)
		for key, sw := range w.sub {
			if !done[key] && cleanMember(key) == m && h.Typeflag == tar.TypeReg {
				done[key] = true
				left--
				readStream(ctx, name+"!"+key, tr, nil, sw, q)
			}
		}
	}
	for key, sw := range w.sub {
		if !done[key] {
			q.fail(name+"!"+key, sw, errors.New("no such member in the archive"))
		}
	}
}

// readZip reads the members w needs of a zip archive: at random from the
// file on disk, or from a copy in memory of a nested one.
func readZip(ctx context.Context, name string, br *bufio.Reader, ra io.ReaderAt, w *want, q *quoted) {
	var size int64
	if f, ok := ra.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil {
			q.fail(name, w, err)
			return
		}
		size = fi.Size()
	} else {
		b, err := io.ReadAll(io.LimitReader(br, MaxNestedArchive+1))
		if err != nil {
			q.fail(name, w, err)
			return
		}
		if len(b) > MaxNestedArchive {
			q.fail(name, w, fmt.Errorf("a zip archive inside an archive larger than %d MiB is not quoted", MaxNestedArchive>>20))
			return
		}
		ra, size = bytes.NewReader(b), int64(len(b))
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		q.fail(name, w, fmt.Errorf("zip: %w", err))
		return
	}
	for key, sw := range w.sub {
		found := false
		for _, zf := range zr.File {
			if cleanMember(zf.Name) != cleanMember(key) || zf.FileInfo().IsDir() {
				continue
			}
			found = true
			rc, err := zf.Open()
			if err != nil {
				q.fail(name+"!"+key, sw, err)
				break
			}
			readStream(ctx, name+"!"+key, rc, nil, sw, q)
			rc.Close()
			break
		}
		if !found {
			q.fail(name+"!"+key, sw, errors.New("no such member in the archive"))
		}
	}
}

// readLines returns the text of the given 1-based lines of r, each cut to
// MaxQuoteBytes, stopping after the highest one.
func readLines(ctx context.Context, r *bufio.Reader, lines []int) (map[int]string, error) {
	want := map[int]bool{}
	last := 0
	for _, l := range lines {
		want[l] = true
		last = max(last, l)
	}
	out := map[int]string{}
	for n := 1; n <= last; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return out, err
			}
		}
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			if want[n] && len(line) <= MaxQuoteBytes {
				line = append(line, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF && len(chunk) == 0 && len(line) == 0 {
				return out, nil
			}
			if err != nil && err != io.EOF {
				return out, err
			}
			if want[n] {
				out[n] = cutLine(line)
			}
			if err == io.EOF {
				return out, nil
			}
			break
		}
	}
	return out, nil
}

// cutLine is a line without its end of line, cut to MaxQuoteBytes (at a
// character boundary) with "…" when longer, invalid UTF-8 replaced.
func cutLine(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	cut := false
	if len(b) > MaxQuoteBytes {
		n := MaxQuoteBytes
		for n > 0 && b[n]&0xc0 == 0x80 {
			n--
		}
		b, cut = b[:n], true
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if cut {
		s += "…"
	}
	return s
}
