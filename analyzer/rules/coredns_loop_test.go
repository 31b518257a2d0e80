package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCoreDNSLoop(t *testing.T) {
	analyzertest.Run(t, rules.CoreDNSLoop, "testdata/coredns-loop")
}
