package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestServiceRuleShadowed(t *testing.T) {
	analyzertest.Run(t, rules.ServiceRuleShadowed, "testdata/service-rule-shadowed")
}
