package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestAPIServerUnreachableScenarios(t *testing.T) {
	analyzertest.Run(t, rules.APIServerUnreachable, "testdata/apiserver-unreachable")
}
