package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNodePortHeldByProcess(t *testing.T) {
	analyzertest.Run(t, rules.NodePortHeldByProcess, "testdata/nodeport-held-by-process")
}
