package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestAPIServerAffinity(t *testing.T) {
	analyzertest.Run(t, rules.APIServerAffinity, "testdata/apiserver-affinity")
}
