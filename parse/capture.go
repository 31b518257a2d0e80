package parse

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
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
		res, err := capture.Read(ctx, r, src.Name, capture.Options{Node: src.Node})
		if res == nil {
			return 0, err
		}
		src.Format = res.Info.Format
		snap.Captures = append(snap.Captures, res.Info)
		snap.Attempts = append(snap.Attempts, res.Attempts...)
		snap.ICMP = append(snap.ICMP, res.ICMP...)
		snap.ARP = append(snap.ARP, res.ARP...)
		return res.Info.Packets, err
	},
}
