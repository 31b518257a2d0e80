package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestPodCIDROverlap(t *testing.T) {
	analyzertest.Run(t, rules.PodCIDROverlap, "testdata/pod-cidr-overlap")
}
