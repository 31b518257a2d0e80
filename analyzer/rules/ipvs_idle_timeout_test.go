package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPVSIdleTimeout(t *testing.T) {
	analyzertest.Run(t, rules.IPVSIdleTimeout, "testdata/ipvs-idle-timeout")
}
