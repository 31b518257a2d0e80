package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestVXLANPortMismatch(t *testing.T) {
	analyzertest.Run(t, rules.VXLANPortMismatch, "testdata/vxlan-port-mismatch")
}
