package parse

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// captureFormat hands pcap and pcapng files to the capture package.
var captureFormat = &Format{
	Name:    "pcap",
	Kind:    model.KindCapture,
	Command: "tcpdump -w FILE (pcap or pcapng, optionally gzip'd; tcpdump -i any writes Linux SLL2)",
	Sniff: func(_ string, head []byte) int {
		if _, ok := capture.Sniff(head); ok {
			return 100
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
		res, err := capture.Read(ctx, r, src.Name, capture.Options{Node: src.Node, Summary: src.Summary})
		if res == nil {
			return 0, err
		}
		src.Format = res.Info.Format
		snap.Captures = append(snap.Captures, res.Info)
		snap.Attempts = concat(snap.Attempts, res.Attempts)
		snap.EndpointStats = append(snap.EndpointStats, res.Endpoints...)
		snap.ICMP = append(snap.ICMP, res.ICMP...)
		snap.ARP = append(snap.ARP, res.ARP...)
		return res.Info.Packets, err
	},
}

// textCaptureFormat reads pasted tcpdump or tshark packet text (format is
// capture.FormatTcpdumpText or capture.FormatTsharkText) into the same
// evidence as a capture.
func textCaptureFormat(format, command string) *Format {
	return &Format{
		Name:    format,
		Kind:    model.KindCapture,
		Command: command,
		Sniff: func(_ string, head []byte) int {
			if !text.IsText(head) {
				return 0
			}
			f, score := capture.SniffText(head)
			if f != format {
				return 0
			}
			return score
		},
		Parse: func(ctx context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
			results, err := capture.ReadText(ctx, r, src.Name, format, capture.Options{Node: src.Node, Summary: src.Summary})
			n := 0
			for _, res := range results {
				snap.Captures = append(snap.Captures, res.Info)
				snap.Attempts = concat(snap.Attempts, res.Attempts)
				snap.EndpointStats = append(snap.EndpointStats, res.Endpoints...)
				snap.ICMP = append(snap.ICMP, res.ICMP...)
				snap.ARP = append(snap.ARP, res.ARP...)
				n += res.Info.Packets
			}
			return n, err
		},
	}
}

var (
	tcpdumpTextFormat = textCaptureFormat(capture.FormatTcpdumpText,
		"tcpdump -nn output pasted as text (with or without -v, -e, -tttt, -A/-X; prompts naming the node start a new capture)")
	tsharkTextFormat = textCaptureFormat(capture.FormatTsharkText,
		"tshark -n / Wireshark packet list pasted as text (\"No. Time Source Destination Protocol Length Info\"), frame details skipped")
)

// concat appends src to dst, or returns src itself when dst is empty: a
// large capture's attempts are not copied.
func concat[T any](dst, src []T) []T {
	if len(dst) == 0 {
		return src
	}
	return append(dst, src...)
}
