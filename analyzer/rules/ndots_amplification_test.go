package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNdotsAmplification(t *testing.T) {
	analyzertest.Run(t, rules.NdotsAmplification, "testdata/ndots-amplification")
}
