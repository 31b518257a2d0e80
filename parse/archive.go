package parse

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// ErrLimit marks input that was not read (or not read to its end) because
// one of the Limits was reached. The rest of the bundle is still read.
var ErrLimit = errors.New("limit reached")

// ErrUnsafePath marks an archive member or link that would point outside
// the bundle: an absolute path, a ".." element, or a link whose target
// leaves the bundle. Such entries are refused, never followed.
var ErrUnsafePath = errors.New("path leaves the bundle")

// Limits bound what Open reads from archives and compressed files, against
// decompression bombs and runaway bundles. A zero field takes its default.
// When a limit is reached, Open reports a positioned warning (wrapping
// ErrLimit), stops reading that file or archive, and goes on with the rest.
type Limits struct {
	// MaxFileBytes bounds the decompressed size of one compressed file or
	// archive member. Files read straight from disk are not bounded.
	// Default 4 GiB.
	MaxFileBytes int64
	// MaxTotalBytes bounds everything decompressed (archives, compressed
	// files, archives inside archives) by one Open. Default 32 GiB.
	MaxTotalBytes int64
	// MaxRatio bounds how many times larger than its compressed input a
	// compressed stream may grow, checked once the stream has produced
	// 8 MiB. Real command outputs and logs compress 5 to 50 times; a
	// gzip bomb about 1000 times. Default 500.
	MaxRatio int64
	// MaxDepth bounds archives nested inside archives. Default 4.
	MaxDepth int
	// MaxEntries bounds the members of one archive. Default 200000.
	MaxEntries int
	// MaxMemoryBuffer is how large a nested archive (or a zip member of a
	// tar, which needs random access) may be and still be held in memory;
	// a larger one is spilled to a temporary file in Options.TempDir,
	// removed when Open returns. Default 32 MiB.
	MaxMemoryBuffer int64
	// MaxDictBytes bounds the dictionary an xz stream may ask for, since
	// the decoder allocates it up front. Default 128 MiB (xz -9 uses
	// 64 MiB).
	MaxDictBytes int64
}

// DefaultLimits returns the limits Open uses for zero fields.
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:    4 << 30,
		MaxTotalBytes:   32 << 30,
		MaxRatio:        500,
		MaxDepth:        4,
		MaxEntries:      200000,
		MaxMemoryBuffer: 32 << 20,
		MaxDictBytes:    128 << 20,
	}
}

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxMemoryBuffer <= 0 {
		l.MaxMemoryBuffer = d.MaxMemoryBuffer
	}
	if l.MaxDictBytes <= 0 {
		l.MaxDictBytes = d.MaxDictBytes
	}
	return l
}

// ratioFloor is the output a compressed stream may produce before its
// ratio is checked, so small, very compressible files are never refused.
const ratioFloor = 8 << 20

// budget is one Open's account of decompressed bytes.
type budget struct {
	lim   Limits
	total int64
}

func limitErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrLimit, fmt.Sprintf(format, args...))
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundReader enforces the limits on one decompressed stream (or archive
// member): its size, its ratio to the compressed bytes consumed, and the
// Open's total. Once a limit is hit every later Read returns the error.
type boundReader struct {
	r   io.Reader
	in  *countReader // compressed side; nil when there is none
	out int64
	max int64 // size bound for this stream
	b   *budget
	err error
}

func (z *boundReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n, err := z.r.Read(p)
	z.out += int64(n)
	z.b.total += int64(n)
	lim := z.b.lim
	switch {
	case z.out > z.max:
		z.err = limitErr("decompressed size exceeds %s (Limits.MaxFileBytes); rest not read", human(z.max))
	case z.in != nil && z.out > ratioFloor && z.in.n > 0 && z.out/z.in.n > lim.MaxRatio:
		z.err = limitErr("decompressed size exceeds %d times the compressed size (Limits.MaxRatio): likely a decompression bomb; rest not read", lim.MaxRatio)
	case z.b.total > lim.MaxTotalBytes:
		z.err = limitErr("bundle decompresses to more than %s (Limits.MaxTotalBytes); rest not read", human(lim.MaxTotalBytes))
	}
	if z.err != nil {
		return n, z.err
	}
	return n, err
}

// limitHit returns the limit error a boundReader met, if any.
func (z *boundReader) limitHit() error {
	if z == nil {
		return nil
	}
	return z.err
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// compression is a compressed stream format recognized by its magic.
type compression int

const (
	noCompression compression = iota
	gzipCompression
	xzCompression
	bzip2Compression
	zstdCompression
)

func (c compression) String() string {
	return [...]string{"none", "gzip", "xz", "bzip2", "zstd"}[c]
}

func compressionOf(head []byte) compression {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return gzipCompression
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return xzCompression
	case len(head) >= 10 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		bytes.Equal(head[4:10], []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}):
		return bzip2Compression
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return zstdCompression
	}
	return noCompression
}

// isTar reports whether head starts a tar archive: "ustar" at offset 257.
func isTar(head []byte) bool {
	return len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar"))
}

// isZip reports whether head starts a zip archive (or an empty one).
func isZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// decompress wraps r, which starts with a stream compressed as c, in a
// decompressor bounded by b. max bounds the output of this stream.
func decompress(c compression, r io.Reader, b *budget, max int64, head []byte) (*boundReader, error) {
	in := &countReader{r: r}
	var zr io.Reader
	switch c {
	case gzipCompression:
		g, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		g.Multistream(true)
		zr = g
	case xzCompression:
		if d, ok := xzDictSize(head); ok && d > b.lim.MaxDictBytes {
			return nil, limitErr("xz stream asks for a %s dictionary, above %s (Limits.MaxDictBytes)", human(d), human(b.lim.MaxDictBytes))
		}
		x, err := xz.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		zr = x
	case bzip2Compression:
		zr = bzip2.NewReader(in)
	case zstdCompression:
		// A window above the dictionary limit is refused, as for xz.
		window := b.lim.MaxDictBytes
		if window < 1<<20 {
			window = 1 << 20
		}
		zd, err := zstd.NewReader(in, zstd.WithDecoderMaxWindow(uint64(window)), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		zr = zd.IOReadCloser()
	default:
		return &boundReader{r: r, max: max, b: b}, nil
	}
	return &boundReader{r: zr, in: in, max: max, b: b}, nil
}

// xzDictSize reads the dictionary size the first LZMA2 block of an xz
// stream declares (xz file format 1.0.4, sections 2.1 and 5.3.1).
func xzDictSize(head []byte) (int64, bool) {
	const streamHeader = 12
	if len(head) < streamHeader+2 {
		return 0, false
	}
	bh := head[streamHeader:]
	size := (int(bh[0]) + 1) * 4
	if bh[0] == 0 || len(bh) < size {
		return 0, false
	}
	flags := bh[1]
	p := 2
	readVarint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9 && p < size; i++ {
			c := bh[p]
			p++
			v |= uint64(c&0x7f) << (7 * i)
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 { // compressed size present
		if _, ok := readVarint(); !ok {
			return 0, false
		}
	}
	if flags&0x80 != 0 { // uncompressed size present
		if _, ok := readVarint(); !ok {
			return 0, false
		}
	}
	nfilters := int(flags&0x03) + 1
	for i := 0; i < nfilters; i++ {
		id, ok := readVarint()
		if !ok {
			return 0, false
		}
		psize, ok := readVarint()
		if !ok || p+int(psize) > size {
			return 0, false
		}
		if id == 0x21 && psize == 1 { // LZMA2
			bits := bh[p]
			if bits > 40 {
				return 0, false
			}
			if bits == 40 {
				return 1<<32 - 1, true
			}
			d := int64(2|(bits&1)) << (bits/2 + 11)
			return d, true
		}
		p += int(psize)
	}
	return 0, false
}

// entryKind is what a tree entry is.
type entryKind int

const (
	entFile entryKind = iota
	entDir
	entSymlink
	entHardlink
	entOther
)

// entry is one member of a tree (a directory on disk, a tar or zip
// archive).
type entry struct {
	name string // cleaned, slash separated, relative to the tree root
	kind entryKind
	size int64  // -1 when unknown
	link string // symlink or hard link target, as stored
	bad  error  // set when the entry is refused (unsafe name)
	// inflated is set when open decompresses (zip members): the content
	// is bounded by the opener.
	inflated bool
	// open returns the entry's content; for tar members it is valid only
	// during the walk callback.
	open func() (io.ReadCloser, error)
}

// tree is a walkable bundle: a directory, a tar (possibly compressed) or a
// zip archive. walk may be called more than once.
type tree interface {
	walk(ctx context.Context, fn func(e *entry) error) error
}

// cleanMember checks an archive member name: it must be relative and must
// not climb with "..". It returns the cleaned name.
func cleanMember(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	if n == "" || n == "." {
		return "", nil
	}
	if path.IsAbs(n) || (len(n) >= 2 && n[1] == ':') {
		return n, fmt.Errorf("%w: absolute member path %q refused", ErrUnsafePath, name)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return n, fmt.Errorf("%w: member path %q climbs out with \"..\": refused", ErrUnsafePath, name)
		}
	}
	return path.Clean(n), nil
}

// linkTarget resolves a link's target relative to the link's directory;
// ok is false when the target lies outside the tree.
func linkTarget(name, target string, hard bool) (string, bool) {
	t := strings.ReplaceAll(target, "\\", "/")
	if path.IsAbs(t) {
		return t, false
	}
	var j string
	if hard {
		j = path.Clean(t) // hard link targets are member names
	} else {
		j = path.Join(path.Dir(name), t)
	}
	if j == ".." || strings.HasPrefix(j, "../") {
		return j, false
	}
	return j, true
}

// dirTree is a directory on disk. Hidden directories (".git") are not
// walked; symlinks are reported, never followed.
type dirTree struct{ root string }

func (d dirTree) walk(ctx context.Context, fn func(e *entry) error) error {
	return filepath.WalkDir(d.root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if p == d.root {
				return err
			}
			rel, _ := filepath.Rel(d.root, p)
			return fn(&entry{name: filepath.ToSlash(rel), kind: entOther, bad: err})
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if p == d.root {
			return nil
		}
		rel, _ := filepath.Rel(d.root, p)
		e := &entry{name: filepath.ToSlash(rel), size: -1}
		switch t := de.Type(); {
		case de.IsDir():
			if strings.HasPrefix(de.Name(), ".") {
				return filepath.SkipDir
			}
			e.kind = entDir
		case t&fs.ModeSymlink != 0:
			e.kind = entSymlink
			e.link, _ = os.Readlink(p)
		case t.IsRegular():
			e.kind = entFile
			if fi, err := de.Info(); err == nil {
				e.size = fi.Size()
			}
			e.open = func() (io.ReadCloser, error) { return os.Open(p) }
		default:
			e.kind = entOther
		}
		return fn(e)
	})
}

// tarTree is a tar archive whose (decompressed) stream open returns.
type tarTree struct {
	open func() (io.Reader, func(), error)
	b    *budget
}

func (t tarTree) walk(ctx context.Context, fn func(e *entry) error) error {
	r, done, err := t.open()
	if err != nil {
		return err
	}
	defer done()
	tr := tar.NewReader(r)
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if n++; n > t.b.lim.MaxEntries {
			return limitErr("archive has more than %d members (Limits.MaxEntries); rest not read", t.b.lim.MaxEntries)
		}
		name, bad := cleanMember(h.Name)
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: h.Size, link: h.Linkname, bad: bad}
		switch h.Typeflag {
		case tar.TypeReg:
			e.kind = entFile
			e.open = func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }
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

// zipTree is a zip archive read through an io.ReaderAt.
type zipTree struct {
	ra   io.ReaderAt
	size int64
	b    *budget
}

func (z zipTree) walk(ctx context.Context, fn func(e *entry) error) error {
	zr, err := zip.NewReader(z.ra, z.size)
	if err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	if len(zr.File) > z.b.lim.MaxEntries {
		return limitErr("archive has more than %d members (Limits.MaxEntries); not read", z.b.lim.MaxEntries)
	}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, bad := cleanMember(strings.ReplaceAll(f.Name, "\\", "/"))
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: int64(f.UncompressedSize64), bad: bad}
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

// blob is a nested archive made random-access: held in memory, or spilled
// to a temporary file.
type blob struct {
	ra   io.ReaderAt
	size int64
	file *os.File
}

func (b *blob) reader() io.Reader { return io.NewSectionReader(b.ra, 0, b.size) }

func (b *blob) close() {
	if b.file != nil {
		name := b.file.Name()
		b.file.Close()
		os.Remove(name)
	}
}

// materialize reads r into a blob: in memory up to maxMem bytes, in a
// temporary file in dir beyond that. r is expected to be bounded already.
func materialize(r io.Reader, maxMem int64, dir string) (*blob, error) {
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, r, maxMem+1)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if n <= maxMem {
		return &blob{ra: bytes.NewReader(buf.Bytes()), size: n}, nil
	}
	f, err := os.CreateTemp(dir, "netmortem-nested-*")
	if err != nil {
		return nil, fmt.Errorf("spill nested archive: %w", err)
	}
	b := &blob{file: f}
	if _, err := f.Write(buf.Bytes()); err != nil {
		b.close()
		return nil, fmt.Errorf("spill nested archive: %w", err)
	}
	m, err := io.Copy(f, r)
	if err != nil {
		b.close()
		return nil, err
	}
	b.ra, b.size = f, n+m
	return b, nil
}

// ctxReader stops reading when ctx is done, so a parser working through a
// huge file honors the deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// switchTee copies what is read through it into buf until stopped: it keeps
// the compressed bytes a sniffing decompressor consumed, so a compressed
// tar found inside an archive can be read again from its start.
type switchTee struct {
	r   io.Reader
	buf bytes.Buffer
	on  bool
}

func (t *switchTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.on && n > 0 {
		t.buf.Write(p[:n])
	}
	return n, err
}
