package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestInterfaceNotFound(t *testing.T) {
	analyzertest.Run(t, rules.InterfaceNotFound, "testdata/interface-not-found")
}
