package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestSynAckReset(t *testing.T) { analyzertest.Run(t, rules.SynAckReset, "testdata/synack-reset") }
