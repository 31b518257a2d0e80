package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCiliumHealthUnreachable(t *testing.T) {
	analyzertest.Run(t, rules.CiliumHealthUnreachable, "testdata/cilium-health-unreachable")
}
