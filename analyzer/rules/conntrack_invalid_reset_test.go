package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestConntrackInvalidReset(t *testing.T) {
	analyzertest.Run(t, rules.ConntrackInvalidReset, "testdata/conntrack-invalid-reset")
}
