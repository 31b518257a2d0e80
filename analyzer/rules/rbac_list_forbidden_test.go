package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestRBACListForbidden(t *testing.T) {
	analyzertest.Run(t, rules.RBACListForbidden, "testdata/rbac-list-forbidden")
}
