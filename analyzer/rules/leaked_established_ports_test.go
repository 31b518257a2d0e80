package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestLeakedEstablishedPorts(t *testing.T) {
	analyzertest.Run(t, rules.LeakedEstablishedPorts, "testdata/leaked-established-ports")
}
