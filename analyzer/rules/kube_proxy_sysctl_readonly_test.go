package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestKubeProxySysctlReadonly(t *testing.T) {
	analyzertest.Run(t, rules.KubeProxySysctlReadonly, "testdata/kube-proxy-sysctl-readonly")
}
