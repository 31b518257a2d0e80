package rules

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// cutAfter writes the bundle dir with its capture.pcap ending after frame
// n: cut (half of the next record follows, so the reader knows it ends
// early) or whole (a capture that simply stopped there).
func cutAfter(t *testing.T, dir string, n int, cut bool) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "capture.pcap" {
			end := 24
			for i := 0; i < n; i++ {
				end += 16 + int(binary.LittleEndian.Uint32(b[end+8:]))
			}
			if cut {
				end += 16 + int(binary.LittleEndian.Uint32(b[end+8:]))/2
			}
			b = b[:end]
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// rulesOn returns the findings, at least warnings, of every rule on the
// bundle dir, counted by rule. stopped, when given, is the frame of its
// capture.pcap a read stopped before (its context done), and which it
// says so at (model.Stopped): what cutAfter writes ending whole after the
// frame before is what such a read gives.
func rulesOn(t *testing.T, dir string, stopped ...int) map[string]int {
	t.Helper()
	ctx := context.Background()
	snap, warns, err := parse.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range stopped {
		warns = append(warns, model.Stopped(model.Pos{File: filepath.Join(dir, "capture.pcap"), Frame: n}, context.Canceled))
	}
	snap.Cuts = model.Cuts(warns)
	got := map[string]int{}
	for _, f := range analyzer.Run(ctx, snap, All(), nil).Findings {
		if f.Severity >= analyzer.Warning {
			got[f.Rule]++
		}
	}
	return got
}

// A judgement of what did not happen is not made from a capture cut before
// it was due: a healthy control's capture cut between the bridged SYN/ACK
// and its translated copy shows no untranslated reply, and one cut right
// after an ICMP fragmentation-needed shows no path-MTU discovery failing
// (info at most); nor from one whose read was stopped there, the run
// interrupted or out of time. The same frames in a capture that ends
// there whole are judged: the window is the cut's, not the frames'. (facts.TestNotYetDue holds the unanswered SYNs.)
func TestNoAbsenceJudgedFromACutCapture(t *testing.T) {
	for _, c := range []struct {
		bundle string
		frames int
		rule   string
	}{
		// 4: the SYN/ACK bridged from the endpoint, before its translated copy.
		{"nat-reply-untranslated-control", 4, NATReplyUntranslated.Name},
		// 15: ICMP fragmentation-needed errors and a large segment sent
		// again, before the smaller segments
		// that path-MTU discovery then sends are acknowledged.
		{"mtu-blackhole-control", 15, ICMPUnreachable.Name},
	} {
		t.Run(c.bundle, func(t *testing.T) {
			dir := filepath.Join("..", "..", "fixtures", "incidents", c.bundle)
			if got := rulesOn(t, cutAfter(t, dir, c.frames, true)); got[c.rule] > 0 {
				t.Errorf("cut after frame %d: findings %v", c.frames, got)
			}
			if got := rulesOn(t, cutAfter(t, dir, c.frames, false)); got[c.rule] == 0 {
				t.Errorf("ending whole after frame %d: no %s finding (%v): the test shows nothing", c.frames, c.rule, got)
			}
			if got := rulesOn(t, cutAfter(t, dir, c.frames, false), c.frames+1); got[c.rule] > 0 {
				t.Errorf("read stopped before frame %d: findings %v", c.frames+1, got)
			}
		})
	}
}
