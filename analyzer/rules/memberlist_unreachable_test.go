package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestMemberlistUnreachable(t *testing.T) {
	analyzertest.Run(t, rules.MemberlistUnreachable, "testdata/memberlist-unreachable")
}
