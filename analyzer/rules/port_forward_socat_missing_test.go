package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestPortForwardSocatMissing(t *testing.T) {
	analyzertest.Run(t, rules.PortForwardSocatMissing, "testdata/port-forward-socat-missing")
}
