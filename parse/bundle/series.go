package bundle

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

var digitsRe = lazyre.New(`[0-9]+`)

// seriesStem is a capture file's name with its rotation counter or
// timestamp taken out: tcpdump -C writes trace.pcap, trace.pcap1,
// trace.pcap2 ...; -G writes names from a strftime pattern.
func seriesStem(path string) string {
	stem := digitsRe.ReplaceAllString(filepath.Base(path), "#")
	return filepath.Join(filepath.Dir(path), strings.TrimRight(stem, "#"))
}

// stitchSeries finds rotated capture series among the captures read from
// disk (same directory, same node, names differing only in digits, time
// ranges that follow each other) and reads each series again as one
// timeline, so that connections spanning two files are one attempt.
// Captures inside archives are left as read.
func stitchSeries(ctx context.Context, snap *model.Snapshot, opts *Options, warns *model.ErrorList) {
	if opts != nil && opts.EachAttempt != nil {
		return // the files' attempts are handed on already
	}
	groups := map[string][]model.CaptureInfo{}
	var keys []string
	for _, c := range snap.Captures {
		if !strings.HasPrefix(c.Format, "pcap") {
			continue
		}
		if st, err := os.Stat(c.File); err != nil || !st.Mode().IsRegular() {
			continue // an archive member, or gone
		}
		k := c.Node + "|" + seriesStem(c.File)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b model.CaptureInfo) int { return a.First.Compare(b.First) })
		rotated := true
		for i := 1; i < len(g); i++ {
			// Rotation: each file starts where the previous one ended.
			if g[i].First.Before(g[i-1].Last.Add(-time.Second)) {
				rotated = false
			}
		}
		if !rotated {
			continue
		}
		files := make([]capture.SeriesFile, len(g))
		inGroup := map[string]bool{}
		for i, c := range g {
			path := c.File
			files[i] = capture.SeriesFile{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
			inGroup[path] = true
		}
		copts := capture.Options{Node: g[0].Node}
		if opts != nil {
			copts.Summary = opts.Summary
		}
		res, _, err := capture.ReadSeries(ctx, files, copts)
		if res == nil {
			warns.Append(err)
			continue
		}
		// Replace what the files gave one by one; their own CaptureInfos
		// stay (per-file counts).
		snap.Attempts = slices.DeleteFunc(snap.Attempts, func(a model.Attempt) bool { return inGroup[a.Pos.File] })
		snap.ICMP = slices.DeleteFunc(snap.ICMP, func(e model.ICMPEvent) bool { return inGroup[e.Pos.File] })
		snap.ARP = slices.DeleteFunc(snap.ARP, func(e model.ARPEvent) bool { return inGroup[e.Pos.File] })
		snap.BadChecksums = slices.DeleteFunc(snap.BadChecksums, func(e model.ChecksumError) bool { return inGroup[e.Pos.File] })
		snap.EndpointStats = slices.DeleteFunc(snap.EndpointStats, func(e model.EndpointStats) bool { return inGroup[e.File] })
		snap.Attempts = append(snap.Attempts, res.Attempts...)
		snap.ICMP = append(snap.ICMP, res.ICMP...)
		snap.ARP = append(snap.ARP, res.ARP...)
		snap.BadChecksums = append(snap.BadChecksums, res.BadChecksums...)
		snap.EndpointStats = append(snap.EndpointStats, res.Endpoints...)
		for i := range snap.Inputs {
			if inGroup[snap.Inputs[i].Path] {
				if snap.Inputs[i].Details == nil {
					snap.Inputs[i].Details = map[string]int{}
				}
				snap.Inputs[i].Details["series_files"] = len(g)
			}
		}
	}
}
