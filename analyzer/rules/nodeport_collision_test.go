package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
)

func TestNodePortCollision(t *testing.T) {
	// The bundle lacks the apiserver's manifest; its NodePort range is
	// known otherwise (the cluster's documentation, kubeadm's config).
	byHand := facts.NodePorts{Range: model.PortRange{First: 20000, Last: 40000}}
	analyzertest.Run(t, rules.NodePortCollision, "testdata/nodeport-collision",
		analyzertest.In("miss-range-by-hand", analyzertest.WithFact(facts.NodePortRange, byHand)))
}
