package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestPortInUse(t *testing.T) { analyzertest.Run(t, rules.PortInUse, "testdata/port-in-use") }
