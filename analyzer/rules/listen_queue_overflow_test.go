package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestListenQueueOverflow(t *testing.T) {
	analyzertest.Run(t, rules.ListenQueueOverflow, "testdata/listen-queue-overflow")
}
