package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNodePodCIDRMissing(t *testing.T) {
	analyzertest.Run(t, rules.NodePodCIDRMissing, "testdata/node-pod-cidr-missing")
}
