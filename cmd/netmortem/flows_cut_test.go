package main

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// An interrupted flows names the inputs the run did not reach, the first
// three and how many more, and nothing when it reached them all.
func TestSayNotReached(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap"}, {Path: "b.pcap", Skipped: model.SkippedCutShort},
		{Path: "c.txt", Skipped: "empty file"}, {Path: "d.pcap", Skipped: model.SkippedCutShort},
		{Path: "e.pcap", Skipped: model.SkippedCutShort}, {Path: "f.pcap", Skipped: model.SkippedCutShort}}}
	var b strings.Builder
	sayNotReached(&b, snap)
	if want := "netmortem flows: 4 inputs not read, the run cut short before them: b.pcap, d.pcap, e.pcap and 1 more\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	sayNotReached(&b, &model.Snapshot{Inputs: snap.Inputs[:1]})
	if b.Len() != 0 {
		t.Errorf("every input reached: %q", b.String())
	}
}
