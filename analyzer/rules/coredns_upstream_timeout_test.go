package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCoreDNSUpstreamTimeout(t *testing.T) {
	analyzertest.Run(t, rules.CoreDNSUpstreamTimeout, "testdata/coredns-upstream-timeout")
}
