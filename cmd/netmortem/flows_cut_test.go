package main

import (
	"context"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/operand"
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

// An interrupt that comes once the captures were read whole says so,
// not that their reading was cut short; one that stopped the read says
// which of the reads it stopped.
func TestFirstReadCut(t *testing.T) {
	whole := operand.Opened{Snap: &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap"}}}}
	stopped := operand.Opened{Snap: whole.Snap,
		Warns: model.ErrorList{model.Stopped(model.Pos{File: "a.pcap", Frame: 4097}, context.Canceled)}}
	for _, c := range []struct {
		in   operand.Opened
		once bool
		want string
	}{
		{whole, true, "the captures were read whole"},
		{whole, false, "the captures were read whole"},
		{stopped, true, "the reading of the captures was cut short"},
		{stopped, false, "the first of two reads of the captures was cut short"},
	} {
		if got := firstReadCut(c.in, c.once); !strings.HasPrefix(got, c.want+":") {
			t.Errorf("stopped %v, one read %v: %q, want %q first", c.in.Stopped(), c.once, got, c.want)
		}
	}
}
