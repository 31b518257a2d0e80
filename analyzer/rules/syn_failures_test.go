package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestSynUnansweredScenarios(t *testing.T) {
	analyzertest.Run(t, rules.SynUnanswered, "testdata/syn-unanswered")
}

func TestSynRefusedScenarios(t *testing.T) {
	analyzertest.Run(t, rules.SynRefused, "testdata/syn-refused")
}
