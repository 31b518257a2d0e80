package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNetworkPolicyDeny(t *testing.T) {
	analyzertest.Run(t, rules.NetworkPolicyDeny, "testdata/network-policy-deny")
}
