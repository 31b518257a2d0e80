package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestCNIBridgeAddressMismatch(t *testing.T) {
	analyzertest.Run(t, rules.CNIBridgeAddressMismatch, "testdata/cni-bridge-address-mismatch")
}
