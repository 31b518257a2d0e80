package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestServiceRuleShadowed(t *testing.T) {
	// A capture summarized, as analyze reads it, folds the established
	// attempts into per-server counters: the finding cites that count,
	// not the connections' SYNs.
	analyzertest.Run(t, rules.ServiceRuleShadowed, "testdata/service-rule-shadowed",
		analyzertest.In("hit-node-dnat", analyzertest.SummaryWeaker(
			"summary mode cites the connections it counted to the apiserver, not their SYN frames")))
}
