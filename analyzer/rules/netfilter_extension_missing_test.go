package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNetfilterExtensionMissing(t *testing.T) {
	analyzertest.Run(t, rules.NetfilterExtensionMissing, "testdata/netfilter-extension-missing")
}
