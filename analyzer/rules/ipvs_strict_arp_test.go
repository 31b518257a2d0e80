package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPVSStrictARPScenarios(t *testing.T) {
	analyzertest.Run(t, rules.IPVSStrictARP, "testdata/ipvs-strict-arp")
}
