package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestStaleDNAT(t *testing.T) { analyzertest.Run(t, rules.StaleDNAT, "testdata/stale-dnat") }
