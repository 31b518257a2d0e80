package bundle_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// Handed on (Options.EachAttempt), a series' attempts are those it gives
// kept, in the same order, each once: for a series, runs of files, and
// files named alike taken at once, in a directory or given as paths.
func TestSeriesHandedOn(t *testing.T) {
	alike := t.TempDir()
	writeFiles(t, alike, map[string][]byte{"node1.pcap": readFixture(t, "handshakes.pcap"), "node2.pcap": readFixture(t, "handshakes-nsec.pcap")})
	rotated := filepath.Dir(rotatedPaths(t)[0])
	runs := runsDir(t)
	for _, c := range []struct {
		name  string
		paths []string
	}{
		{"series", []string{rotated}},
		{"series as paths", rotatedPaths(t)},
		{"runs", []string{runs}},
		{"runs as paths", glob(t, filepath.Join(runs, "*.pcap"))},
		{"named alike", []string{alike}},
		{"named alike as paths", glob(t, filepath.Join(alike, "*.pcap"))},
	} {
		for _, summary := range []bool{false, true} {
			opts := &parse.Options{KeepAttempts: !summary}
			opts.Summary.Enabled = summary
			kept, warns, err := parse.OpenAll(context.Background(), c.paths, opts)
			if err != nil || len(warns) > 0 || len(kept.Attempts) == 0 {
				t.Fatalf("%s: open: %d attempts, %v %v", c.name, len(kept.Attempts), err, warns)
			}
			var handed []model.Attempt
			opts = &parse.Options{EachAttempt: func(a model.Attempt) { handed = append(handed, a) }}
			opts.Summary.Enabled = summary
			snap, warns, err := parse.OpenAll(context.Background(), c.paths, opts)
			if err != nil || len(warns) > 0 {
				t.Fatalf("%s: open, handing on: %v %v", c.name, err, warns)
			}
			if len(snap.Attempts) != 0 || !reflect.DeepEqual(handed, kept.Attempts) {
				t.Errorf("%s, summary %v: %d attempts handed on (%d kept besides), %d kept when asked", c.name, summary,
					len(handed), len(snap.Attempts), len(kept.Attempts))
			}
			if !reflect.DeepEqual(snap.Inputs, kept.Inputs) || !reflect.DeepEqual(snap.Captures, kept.Captures) {
				t.Errorf("%s, summary %v: inputs and captures differ from those read keeping the attempts", c.name, summary)
			}
		}
	}
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) < 2 {
		t.Fatalf("%s: %v %v", pattern, m, err)
	}
	return m
}
