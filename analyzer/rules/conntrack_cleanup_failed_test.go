package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestConntrackCleanupFailed(t *testing.T) {
	analyzertest.Run(t, rules.ConntrackCleanupFailed, "testdata/conntrack-cleanup-failed")
}
