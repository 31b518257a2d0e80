package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCNIIPAMExhausted(t *testing.T) {
	analyzertest.Run(t, rules.CNIIPAMExhausted, "testdata/cni-ipam-exhausted")
}
