package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestKubeProxyRestoreFailed(t *testing.T) {
	analyzertest.Run(t, rules.KubeProxyRestoreFailed, "testdata/kube-proxy-restore-failed")
}
