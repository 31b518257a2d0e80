package rules_test

import (
	"testing"

	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/analyzer/rules"
)

func TestICMPUnreachableScenarios(t *testing.T) {
	analyzertest.Run(t, rules.ICMPUnreachable, "testdata/icmp-unreachable")
}

func TestARPFlapScenarios(t *testing.T) { analyzertest.Run(t, rules.ARPFlap, "testdata/arp-flap") }

func TestARPUnansweredScenarios(t *testing.T) {
	analyzertest.Run(t, rules.ARPUnanswered, "testdata/arp-unanswered")
}

func TestTimeWaitChurnScenarios(t *testing.T) {
	analyzertest.Run(t, rules.TimeWaitChurn, "testdata/timewait-churn")
}

func TestMTUBlackholeScenarios(t *testing.T) {
	analyzertest.Run(t, rules.MTUBlackhole, "testdata/mtu-blackhole")
}

func TestHairpinDropScenarios(t *testing.T) {
	analyzertest.Run(t, rules.HairpinDrop, "testdata/hairpin-drop")
}
