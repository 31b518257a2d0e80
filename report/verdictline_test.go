package report

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// Another finding of the lead's own rule is counted as more like it, not
// named as a rule the cause is behind; other rules still are.
func TestVerdictLineSameRule(t *testing.T) {
	c := VerdictCause{Certainty: analyzer.Proven, Rule: "mtu-blackhole", Title: "segments dropped",
		Related: []VerdictLink{
			{Rule: "mtu-blackhole", Link: LinkSharedEvidence},
			{Rule: "icmp-unreachable", Link: LinkCauseFamily},
		}}
	got := verdictLine(c, nil)
	want := "Proven cause: segments dropped [mtu-blackhole]; 1 more finding like it; likely also behind icmp-unreachable"
	if got != want {
		t.Errorf("verdictLine:\n got %q\nwant %q", got, want)
	}
	if strings.Contains(got, "behind mtu-blackhole") {
		t.Errorf("the lead's own rule is named as following from it: %q", got)
	}
}
