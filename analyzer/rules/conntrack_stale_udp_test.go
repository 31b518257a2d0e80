package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestConntrackStaleUDP(t *testing.T) {
	analyzertest.Run(t, rules.ConntrackStaleUDP, "testdata/conntrack-stale-udp")
}
