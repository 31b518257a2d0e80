package bundle

import (
	"errors"
	"fmt"
	"io"
	"reflect"
)

// ErrLimit marks input that was not read (or not read to its end) because
// one of the Limits was reached. The rest of the bundle is still read.
var ErrLimit = errors.New("limit reached")

// ErrTotalBytes marks input not read because the bundle decompressed to
// more than Limits.MaxTotalBytes; it is an ErrLimit (errors.Is).
var ErrTotalBytes = fmt.Errorf("%w", ErrLimit)

// Limits bound what Open reads from archives and compressed files, and the
// memory its parsers keep, against decompression bombs and runaway bundles.
// A zero field takes its default.
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
	// MaxEntries bounds the archive members one Open reads, counted
	// across every archive and every level of nesting. Default 200000.
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
	// MaxMemory is the memory budget of one Open: what the parsed text
	// of its inputs is estimated to keep in memory (5 bytes for each
	// byte of text, 32 for each line: what the parsers' records and
	// their strings cost). An input that takes the budget past it is
	// read no further (what was read is kept, and a warning names it);
	// later inputs are not read. Captures are not charged: their memory
	// is bounded by Options.Summary. Default 256 MiB, which keeps a whole
	// analyze under 1 GB.
	MaxMemory int64
	// MaxInputMemory is the part of MaxMemory one input may use, so that
	// a single huge file leaves room for the rest of the bundle: about
	// one fifth of it in text (one twelfth for a kubectl JSON or YAML
	// document, whose decoding peaks higher). Default half of MaxMemory:
	// 128 MiB, about 25 MB of text.
	MaxInputMemory int64
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
		MaxMemory:       256 << 20,
		MaxInputMemory:  128 << 20,
	}
}

// withDefaults fills the zero (or negative) fields of l with those of
// DefaultLimits.
func (l Limits) withDefaults() Limits {
	inputMemory := l.MaxInputMemory
	d := reflect.ValueOf(DefaultLimits())
	v := reflect.ValueOf(&l).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Int() <= 0 {
			f.SetInt(d.Field(i).Int())
		}
	}
	if inputMemory <= 0 {
		l.MaxInputMemory = l.MaxMemory / 2
	}
	return l
}

// ratioFloor is the output a compressed stream may produce before its
// ratio is checked, so small, very compressible files are never refused.
const ratioFloor = 8 << 20

// budget is one Open's account of decompressed bytes, archive members and
// memory.
type budget struct {
	lim   Limits
	total int64 // bytes decompressed, at every level
	// entries counts the archive members walked, across nesting levels.
	entries int
	mem     int64 // estimated memory kept by the parsed inputs
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
	// scale is how many times larger than the bytes on disk that made
	// it the compressed side already is (the cumulative ratio of the
	// archives and compressed files around this stream); 0 reads as 1.
	scale float64
	// what names the stream in the size limit's message when it is not
	// a decompressed one ("stdin").
	what string
}

// ratio is the stream's cumulative ratio so far: its own times its
// scale. Nested levels multiply, so that a bomb cannot hide below the
// limit by spreading its ratio over several levels.
func (z *boundReader) ratio() float64 {
	s := max(z.scale, 1)
	if z.in == nil || z.in.n == 0 {
		return s
	}
	return s * float64(z.out) / float64(z.in.n)
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
	case z.out > z.max && z.what != "":
		z.err = limitErr("%s is larger than %s (Limits.MaxFileBytes); rest not read", z.what, human(z.max))
	case z.out > z.max:
		z.err = limitErr("decompressed size exceeds %s (Limits.MaxFileBytes); rest not read", human(z.max))
	case z.in != nil && z.out > ratioFloor && z.in.n > 0 && z.ratio() > float64(lim.MaxRatio):
		z.err = limitErr("decompressed size exceeds %d times the compressed size, counting the archives and compressed files around it (Limits.MaxRatio): likely a decompression bomb; rest not read", lim.MaxRatio)
	case z.b.total > lim.MaxTotalBytes:
		z.err = fmt.Errorf("%w: bundle decompresses to more than %s (Limits.MaxTotalBytes); rest not read", ErrTotalBytes, human(lim.MaxTotalBytes))
	}
	if z.err != nil {
		return n, z.err
	}
	return n, err
}

// refund takes what z decompressed back out of the bundle's total, for a
// file decompressed again; z may be nil.
func (z *boundReader) refund() {
	if z != nil {
		z.b.total -= z.out
		z.out = 0
	}
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
