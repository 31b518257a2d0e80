package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestIPVSConnReuseDelay(t *testing.T) {
	analyzertest.Run(t, rules.IPVSConnReuseDelay, "testdata/ipvs-conn-reuse-delay")
}
