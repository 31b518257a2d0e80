// Package pcapfile reads the packet records of capture files: classic
// pcap (micro- or nanosecond, either byte order) and pcapng (any number of
// sections and interfaces, each with its link type, time resolution and
// offset), either of them gzip-compressed. It is hand-written, with no cgo
// and no libpcap, and streams: a record's bytes are walked in place in a
// read buffer, never copied but when they straddle two reads. Its tests
// and fuzz targets hold it to gopacket's pcapgo readers (the same records,
// times and errors), but where pcapgo stops at a record longer than its
// original length or reads a corrupt pcapng block on into the next, which
// it reads as libpcap does or reports. What the frames hold is package
// decode's concern.
package pcapfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/gopacket/gopacket/layers"
)

var (
	pcapMagics = [][]byte{
		{0xd4, 0xc3, 0xb2, 0xa1}, {0xa1, 0xb2, 0xc3, 0xd4}, // microsecond, both byte orders
		{0x4d, 0x3c, 0xb2, 0xa1}, {0xa1, 0xb2, 0x3c, 0x4d}, // nanosecond
	}
	pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}
)

// Sniff reports whether head starts a packet capture and which container it
// is: "pcap" or "pcapng".
func Sniff(head []byte) (string, bool) {
	if len(head) < 4 {
		return "", false
	}
	for _, m := range pcapMagics {
		if bytes.Equal(head[:4], m) {
			return "pcap", true
		}
	}
	if bytes.Equal(head[:4], pcapngMagic) {
		return "pcapng", true
	}
	return "", false
}

// ErrNotCapture is returned by NewReader for input that is not a pcap or
// pcapng file.
var ErrNotCapture = errors.New("not a pcap or pcapng capture")

// Reader reads the records of one capture file.
type Reader struct {
	src        recordSource
	ng         *pcapngRecords // nil for pcap
	link       layers.LinkType
	kind       string
	compressed bool
	zr         *gzip.Reader
}

// NewReader opens the capture file r: pcap or pcapng, perhaps
// gzip-compressed. Input that is not a capture gives an error wrapping
// ErrNotCapture. The Reader must be closed.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	rd := &Reader{}
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		rd.zr, rd.compressed = zr, true
		br = bufio.NewReaderSize(zr, 64<<10)
		head, _ = br.Peek(4)
	}
	kind, ok := Sniff(head)
	if !ok {
		rd.Close()
		return nil, ErrNotCapture
	}
	rd.kind = kind
	if kind == "pcap" {
		pr, err := newPcapRecords(br)
		if err != nil {
			rd.Close()
			return nil, fmt.Errorf("pcap header: %w", err)
		}
		rd.src, rd.link = pr, pr.link
		return rd, nil
	}
	nr, err := newPcapngRecords(br)
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("pcapng header: %w", err)
	}
	rd.src, rd.ng = nr, nr
	return rd, nil
}

// Next reads the next record into rec; it returns io.EOF at the end of
// the file.
func (r *Reader) Next(rec *Record) error { return r.src.next(rec) }

// Format is the file's container: "pcap" or "pcapng", with ".gz" when it
// is gzip-compressed.
func (r *Reader) Format() string {
	if r.compressed {
		return r.kind + ".gz"
	}
	return r.kind
}

// Sections reports whether the file is pcapng, whose sections each start
// their interfaces anew: the link type of a record is then to be looked up
// for every record, not once per interface.
func (r *Reader) Sections() bool { return r.ng != nil }

// LinkType returns the link type of interface iface of the current
// section: for pcap, the file's one link type whatever iface is; for
// pcapng, 255 for an interface the section has not.
func (r *Reader) LinkType(iface int) layers.LinkType {
	if r.ng == nil {
		return r.link
	}
	return r.ng.links(iface)
}

// Interface is a capture interface as a pcapng interface description
// block gives it.
type Interface struct {
	Link layers.LinkType
	// Filter is the capture filter the interface was opened with, "" when
	// the block does not say.
	Filter string
}

// Interfaces returns the interfaces of the current section of a pcapng
// file (once the file is read, its last section), nil for pcap.
func (r *Reader) Interfaces() []Interface {
	if r.ng == nil {
		return nil
	}
	out := make([]Interface, len(r.ng.ifaces))
	for i, f := range r.ng.ifaces {
		out[i] = Interface{Link: f.link, Filter: f.filter}
	}
	return out
}

// Close closes the gzip stream of a compressed file; it does not close
// the io.Reader given to NewReader.
func (r *Reader) Close() error {
	if r.zr != nil {
		return r.zr.Close()
	}
	return nil
}

// Plain returns the bytes read and not yet returned of a classic pcap
// file in little-endian byte order, and the factor that makes a record's
// fraction of a second nanoseconds; nil and 0 for any other file. The bytes
// start at a record; the last record in them may not be whole. A caller
// that walks the records in them itself says how many bytes it took with
// Skip, and reads the rest with Next as before.
func (r *Reader) Plain() ([]byte, uint32) {
	p, ok := r.src.(*pcapRecords)
	if !ok || p.big {
		return nil, 0
	}
	return p.buf[p.off:p.end], p.nanoFactor
}

// Skip takes n bytes of those Plain returned, whole records, as read.
func (r *Reader) Skip(n int) { r.src.(*pcapRecords).off += n }
