package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCalicoBGPDown(t *testing.T) {
	analyzertest.Run(t, rules.CalicoBGPDown, "testdata/calico-bgp-down")
}
