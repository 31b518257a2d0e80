package model_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/netmortem/netmortem/model"
)

func TestCuts(t *testing.T) {
	warns := model.ErrorList{
		{Pos: model.Pos{File: "a.txt", Line: 3}, Err: errors.New("syntax error")},
		{Pos: model.Pos{File: "c.pcap", Frame: 813}, Err: fmt.Errorf("truncated or corrupt packet record: %w", io.ErrUnexpectedEOF)},
		{Pos: model.Pos{File: "c.pcap", Frame: 900}, Err: io.ErrUnexpectedEOF},
		{Pos: model.Pos{File: "ipt.txt", Line: 40}, Err: fmt.Errorf("%w: table nat has no COMMIT", model.ErrTruncated)},
		{Pos: model.Pos{File: "b.tar.gz"}, Err: fmt.Errorf("tar: the stream past the archive's end blocks: %w", gzip.ErrChecksum)},
		{Pos: model.Pos{File: "d.pcap", Frame: 4097}, Err: fmt.Errorf("%w, what came before kept: %w", model.ErrStopped, context.Canceled)},
		{Pos: model.Pos{File: "e.txt", Line: 1024}, Err: fmt.Errorf("%w, what came before kept: %w", model.ErrStopped, context.DeadlineExceeded)},
		{Pos: model.Pos{File: "f.log", Line: 12}, Err: fmt.Errorf("reading: %w", context.Canceled)},
		model.Stopped(model.Pos{File: "g.yaml"}, context.Canceled),
		model.Stopped(model.Pos{File: "h.pcap", Frame: 1}, context.Canceled),
	}
	var got []string
	for _, c := range model.Cuts(warns) {
		got = append(got, c.String())
	}
	want := []string{"c.pcap: cut after frame 812", "ipt.txt:40: truncated: table nat has no COMMIT",
		"b.tar.gz: tar: the stream past the archive's end blocks: gzip: invalid checksum",
		"d.pcap: read to frame 4096: the run was cut short there", "e.txt: read to line 1023: the run was cut short there",
		"g.yaml: the run was cut short while it was read", "h.pcap: the run was cut short before its first frame ends"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cuts %q\nwant %q", got, want)
	}
	snap := &model.Snapshot{Cuts: model.Cuts(warns)}
	for file, cut := range map[string]bool{"b.tar.gz!n/sysctl.txt": true, "b.tar.gz": true, "b.tar.gzip": false, "a.txt": false} {
		if _, ok := snap.CutOf(file); ok != cut {
			t.Errorf("CutOf(%q) = %v, want %v", file, ok, cut)
		}
	}
}

// A read was stopped when a warning says so, or an input was not
// reached; a cut of another kind, or an input skipped for another
// reason, is no stop.
func TestStoppedIn(t *testing.T) {
	trunc := model.ErrorList{{Pos: model.Pos{File: "a.txt", Line: 4}, Err: model.ErrTruncated}}
	for _, c := range []struct {
		warns  model.ErrorList
		inputs []model.Input
		want   bool
	}{
		{nil, nil, false},
		{trunc, []model.Input{{Path: "b", Skipped: "empty file"}}, false},
		{append(trunc, model.Stopped(model.Pos{File: "a.txt", Line: 9}, context.Canceled)), nil, true},
		{model.ErrorList{{Pos: model.Pos{File: "c.log"}, Err: context.DeadlineExceeded}}, nil, true},
		{nil, []model.Input{{Path: "d", Skipped: model.SkippedCutShort}}, true},
	} {
		if got := model.StoppedIn(c.warns, c.inputs); got != c.want {
			t.Errorf("StoppedIn(%v, %+v) = %v, want %v", c.warns.Err(), c.inputs, got, c.want)
		}
	}
}
