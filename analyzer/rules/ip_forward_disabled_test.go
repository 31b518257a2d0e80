package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPForwardDisabled(t *testing.T) {
	analyzertest.Run(t, rules.IPForwardDisabled, "testdata/ip-forward-disabled")
}
