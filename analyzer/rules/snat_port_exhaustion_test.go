package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestSNATPortExhaustion(t *testing.T) {
	analyzertest.Run(t, rules.SNATPortExhaustion, "testdata/snat-port-exhaustion")
}
