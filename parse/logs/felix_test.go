package logs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// Felix's refusal of a loose reverse-path filter, as people pasted it: the
// Go Felix's line wrapped by the paste, the Python Felix's with its
// traceback. The wrapped line and the traceback continue their entries.
func TestFelixRealLogs(t *testing.T) {
	for _, c := range []struct {
		file    string
		events  int
		level   string
		caller  string
		message string // a part of the first event's message
	}{
		{"image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log", 1, "FATAL", "int_dataplane.go 1035",
			"rp_filter to be set to 0\nor 1. If you require loose RPF"},
		{"calicoctl-issue1082_felix-python-2016_rpf-loose-traceback.log", 2, "CRITICAL", "calico.felix.devices 70",
			"Kernel's RPF check is set to 'loose'"},
	} {
		t.Run(c.file, func(t *testing.T) {
			file := filepath.Join(testutil.Root(), "fixtures/real/incident-evidence", c.file)
			snap, warns, err := parse.Open(context.Background(), file, nil)
			if err != nil || len(warns) != 0 {
				t.Fatalf("open: %v %v", err, warns)
			}
			if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "felix-log" || len(snap.Logs) != c.events {
				t.Fatalf("inputs %+v, %d events", snap.Inputs, len(snap.Logs))
			}
			ev := snap.Logs[0]
			if ev.Level != c.level || ev.Fields["caller"] != c.caller || ev.Source != "felix" || ev.Pos.Line != 1 ||
				!strings.Contains(ev.Message, c.message) {
				t.Errorf("first event: %+v", ev)
			}
		})
	}
}

// BIRD's lines among confd's in calico-node's log are events of their own,
// of source bird, not the rest of the confd entry before them.
func TestBirdLines(t *testing.T) {
	in := "2020-05-12 05:43:41.128 [INFO][62] confd/resource.go 277: Target config /etc/calico/confd/config/bird.cfg has been updated\n" +
		"bird: Reconfiguration requested by SIGHUP\n" +
		"bird: BGP: Unexpected connect from unknown address 10.0.2.15 (port 53721)\n" +
		"bird6: Reconfigured\n"
	snap, warns, err := parse.OpenReaderAt(context.Background(), "calico-node.log", strings.NewReader(in), int64(len(in)), nil)
	if err != nil || len(warns) != 0 || len(snap.Logs) != 4 {
		t.Fatalf("%v %v: %+v", err, warns, snap.Logs)
	}
	if e := snap.Logs[2]; e.Source != "bird" || e.Message != "BGP: Unexpected connect from unknown address 10.0.2.15 (port 53721)" ||
		e.Pos.Line != 3 || snap.Logs[3].Source != "bird6" || snap.Logs[0].Message != "Target config /etc/calico/confd/config/bird.cfg has been updated" {
		t.Errorf("%+v", snap.Logs)
	}
}
