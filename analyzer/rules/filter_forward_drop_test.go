package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestFilterForwardDrop(t *testing.T) {
	analyzertest.Run(t, rules.FilterForwardDrop, "testdata/filter-forward-drop")
}
