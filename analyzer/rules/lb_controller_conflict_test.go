package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestLBControllerConflict(t *testing.T) {
	analyzertest.Run(t, rules.LBControllerConflict, "testdata/lb-controller-conflict")
}
