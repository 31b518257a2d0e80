// Package capture reads packet captures (pcap and pcapng, optionally
// gzip-compressed) and folds their packets into the evidence netmortem
// reasons about: TCP connection attempts with their handshake outcome, ICMP
// errors, and ARP claims, each with the frame numbers that prove it.
//
// The reader streams: it never holds the capture's packets, so memory
// follows the number of live connections, not the file size. It uses
// github.com/gopacket/gopacket's pure-Go pcapgo reader; no cgo, no libpcap.
package capture

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/netmortem/netmortem/model"
)

// Options tune a capture read.
type Options struct {
	// Node is the node the capture was taken on, "" when unknown.
	Node string
}

// Result is what a capture yields.
type Result struct {
	Info     model.CaptureInfo
	Attempts []model.Attempt
	ICMP     []model.ICMPEvent
	ARP      []model.ARPEvent
}

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

// ErrNotCapture is returned by Read for input that is not a pcap or pcapng
// file.
var ErrNotCapture = errors.New("not a pcap or pcapng capture")

// Read reads a whole capture from r. name is used in positions. Problems with
// single frames (truncated records, undecodable headers) are returned as a
// model.ErrorList together with everything that could be read.
func Read(ctx context.Context, r io.Reader, name string, opts Options) (*Result, error) {
	return nil, errors.New("capture: not implemented yet")
}
