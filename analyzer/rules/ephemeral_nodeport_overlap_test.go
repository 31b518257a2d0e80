package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestEphemeralNodePortOverlap(t *testing.T) {
	analyzertest.Run(t, rules.EphemeralNodePortOverlap, "testdata/ephemeral-nodeport-overlap")
}
