package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestKubeProxyConntrackReadonly(t *testing.T) {
	analyzertest.Run(t, rules.KubeProxyConntrackReadonly, "testdata/kube-proxy-conntrack-readonly")
}
