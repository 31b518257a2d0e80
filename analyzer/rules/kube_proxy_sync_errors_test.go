package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestKubeProxySyncErrorsScenarios(t *testing.T) {
	analyzertest.Run(t, rules.KubeProxySyncErrors, "testdata/kube-proxy-sync-errors")
}
