package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNodeInputDrop(t *testing.T) {
	analyzertest.Run(t, rules.NodeInputDrop, "testdata/node-input-drop")
}
