package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestInotifyLimitReached(t *testing.T) {
	analyzertest.Run(t, rules.InotifyLimitReached, "testdata/inotify-limit-reached")
}
