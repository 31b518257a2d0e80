package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestServiceNoEndpoints(t *testing.T) {
	analyzertest.Run(t, rules.ServiceNoEndpoints, "testdata/service-no-endpoints")
}
