package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestNATReplyUntranslated(t *testing.T) {
	analyzertest.Run(t, rules.NATReplyUntranslated, "testdata/nat-reply-untranslated")
}
