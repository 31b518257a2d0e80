package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestWeaveNPCBlocked(t *testing.T) {
	analyzertest.Run(t, rules.WeaveNPCBlocked, "testdata/weave-npc-blocked")
}
