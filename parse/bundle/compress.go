package bundle

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

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
