package kube_test

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/kube"
)

const eventLinesReal = "fixtures/field/lb-controller-conflict--kubernetes-arm-5/kubectl-get-events.txt"

// TestEventLines reads the event a ticket pasted from a dashboard (the
// object with trailing spaces, the reason, the scheduler's message).
func TestEventLines(t *testing.T) {
	evs := parsetest.ReadFile(t, eventLinesReal, kube.EventLines)
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	e := evs[0]
	got := strings.Join([]string{e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Message}, "|")
	want := "kube-system|svclb-traefik-ingress-service-external-8k4xr|FailedScheduling|0/5 nodes are available: 1 " +
		"node(s) didn't match node selector, 4 node(s) didn't have free ports for the requested pod ports."
	if got != want || e.Source.Pos.Line != 1 || !e.Source.FromTable {
		t.Errorf("got %s at %+v\nwant %s at line 1", got, e.Source, want)
	}
}

// A cut event and a line of another shape are warnings at their lines.
func TestEventLinesErrors(t *testing.T) {
	for _, in := range []string{"kube-system:web-1\nFailedScheduling\n", "kube-system:web-1\nnot a reason\nmsg\n", "Name: x\n"} {
		if _, err := kube.EventLines(strings.NewReader(in), "e.txt"); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestSniffEventLines(t *testing.T) {
	parsetest.CheckSniff(t, parse.Formats(), kube.EventLinesFormat, []string{eventLinesReal},
		append([]string{"fixtures/incidents/ephemeral-nodeport/services.json", "parse/testdata/ipjson/ip-addr.txt",
			"fixtures/field/network-policy-deny--hubble-observer-8/kubectl-get-pods.txt"}, parsetest.OtherHostOutputs...))
}

func FuzzEventLines(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{eventLinesReal})
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := kube.EventLines(strings.NewReader(in), "f.txt")
		parsetest.CheckFuzzErrors(t, err, "f.txt")
		for _, e := range evs {
			if e.Source.Pos.Line < 1 || e.Reason == "" || e.InvolvedObject.Name == "" {
				t.Fatalf("event %+v", e)
			}
		}
	})
}
