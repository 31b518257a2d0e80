package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestKubeProxyIPVSUnavailable(t *testing.T) {
	analyzertest.Run(t, rules.KubeProxyIPVSUnavailable, "testdata/kube-proxy-ipvs-unavailable")
}
