package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestMTUMismatch(t *testing.T) { analyzertest.Run(t, rules.MTUMismatch, "testdata/mtu-mismatch") }
