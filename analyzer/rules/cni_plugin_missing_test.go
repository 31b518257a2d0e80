package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCNIPluginMissing(t *testing.T) {
	analyzertest.Run(t, rules.CNIPluginMissing, "testdata/cni-plugin-missing")
}
