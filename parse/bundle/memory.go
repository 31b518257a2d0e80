package bundle

import (
	"bytes"
	"io"

	"github.com/netmortem/netmortem/model"
)

// What a parsed byte of text and a parsed line are estimated to keep in
// memory: measured on sysctl, klog, iptables-save and kubectl dumps, whose
// records cost 4 to 5 times their text once parsed, more for short lines.
const (
	memoryPerByte = 5
	memoryPerLine = 32
)

// documentPeakPerByte is what a byte of a format that decodes a whole
// document before keeping its records (a kubectl List is one JSON
// document, decoded through yaml.Node) is estimated to take while it is
// parsed: that memory is garbage once the input is read, so it is charged
// to the input's share (Limits.MaxInputMemory) only. Measured: a kubectl
// List of pods peaks at 35 times its size in heap, half of which is the
// collector's slack.
const documentPeakPerByte = 12

// documentFormats are the formats read as whole documents.
var documentFormats = map[string]bool{
	"kubectl":       true,
	"ip-addr-json":  true,
	"ip-route-json": true,
	"neigh-json":    true,
	"sysctl-json":   true,
}

// charged reports whether a format's inputs are charged to the memory
// budget: captures are not, their memory being bounded by Options.Summary
// (connection attempts folded into counters as they are read), not by
// their size.
func charged(k model.Kind) bool { return k != model.KindCapture }

// chargeReader charges what a parser reads to the Open's memory budget:
// every byte and line of text handed to a parser is taken to be kept. Once
// the input's share (Limits.MaxInputMemory) or the Open's budget
// (Limits.MaxMemory) is spent, it returns the whole lines of that read with
// an ErrLimit error, and the error to every later read: the parser keeps
// what it read and stops (a whole-document format keeps nothing of a
// document cut short, and its charge to the Open's budget is given back).
type chargeReader struct {
	r       io.Reader
	b       *budget
	perByte int64 // what a byte costs the input's share while it is read
	read    int64 // bytes read
	used    int64 // the input's share used
	err     error
}

// newChargeReader charges r, read by the format named format, to b.
func newChargeReader(r io.Reader, b *budget, format string) *chargeReader {
	c := &chargeReader{r: r, b: b, perByte: memoryPerByte}
	if documentFormats[format] {
		c.perByte = documentPeakPerByte
	}
	return c
}

func (c *chargeReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	lines := int64(bytes.Count(p[:n], []byte{'\n'})) * memoryPerLine
	c.read += int64(n)
	c.used += int64(n)*c.perByte + lines
	c.b.mem += int64(n)*memoryPerByte + lines
	lim := c.b.lim
	switch {
	case c.used > lim.MaxInputMemory:
		c.err = limitErr("over the memory budget of one input (%s, Limits.MaxInputMemory) after %s of it: what was read is kept, the rest of it not read", human(lim.MaxInputMemory), humanSize(c.read))
	case c.b.mem > lim.MaxMemory:
		c.err = limitErr("over the memory budget (%s, Limits.MaxMemory) of the bundle: what was read is kept, the rest of it not read", human(lim.MaxMemory))
	}
	if c.err != nil {
		// The parser gets whole lines only: a line cut by the budget
		// would read as a syntax error.
		return bytes.LastIndexByte(p[:n], '\n') + 1, c.err
	}
	return n, err
}

// refund gives back to the Open's budget what a whole-document format
// cut short by the budget was charged: nothing of its cut document is
// kept.
func (c *chargeReader) refund() {
	if c.err != nil && c.perByte == documentPeakPerByte {
		c.b.mem -= c.read * memoryPerByte
	}
}

// spent reports whether the Open's memory budget is used up, so that a
// further input is not read at all.
func (b *budget) spent() bool { return b.mem >= b.lim.MaxMemory }

// humanSize writes a size rounded to the unit below it.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return human(n >> 30 << 30)
	case n >= 1<<20:
		return human(n >> 20 << 20)
	case n >= 1<<10:
		return human(n >> 10 << 10)
	}
	return human(n)
}
