package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestVXLANChecksumOffload(t *testing.T) {
	analyzertest.Run(t, rules.VXLANChecksumOffload, "testdata/vxlan-checksum-offload")
}
