package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestVXLANPortBlocked(t *testing.T) {
	analyzertest.Run(t, rules.VXLANPortBlocked, "testdata/vxlan-port-blocked")
}
