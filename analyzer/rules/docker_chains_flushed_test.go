package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestDockerChainsFlushed(t *testing.T) {
	analyzertest.Run(t, rules.DockerChainsFlushed, "testdata/docker-chains-flushed")
}
