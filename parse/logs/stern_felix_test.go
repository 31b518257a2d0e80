package logs

import (
	"testing"
)

// stern's "<pod> <container> <line>" around calico-node's Felix-shaped
// lines, as pasted in projectcalico/calico#6910 (fixtures/field): each
// line read with its Pod and container.
func TestSternFelixReal(t *testing.T) {
	rel := "fixtures/field/cni-wrong-interface--calico-issue-6910/calico-node.log"
	evs, err := readReal(t, rel)
	if err != nil {
		t.Error(err)
	}
	if len(evs) != 6 {
		t.Fatalf("%d events, want 6", len(evs))
	}
	ev := evs[2]
	if ev.Pod != "calico-node-p4t8n" || ev.Container != "calico-node" || ev.Level != "INFO" || ev.Pos.Line != 3 ||
		ev.Message != "Using autodetected IPv4 address on interface nodelocaldns: 10.96.0.10/32" {
		t.Errorf("line 3 read as %s", containerLine(ev))
	}
}
