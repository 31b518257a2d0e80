package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCNIWrongInterface(t *testing.T) {
	analyzertest.Run(t, rules.CNIWrongInterface, "testdata/cni-wrong-interface")
}
