package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestProbeRestartLoopScenarios(t *testing.T) {
	analyzertest.Run(t, rules.ProbeRestartLoop, "testdata/probe-restart-loop")
}
