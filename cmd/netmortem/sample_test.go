package main

import (
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// raceSample is how many fixtures of every-fixture tests run under the race
// detector: one in raceSample. `make test` runs those tests again without
// -race over every fixture: what they check is the output of each fixture,
// while the race detector needs only some of them to see the code run: the
// goroutines of a run (the capture's shards, the bundle's readers, the
// writers) are the same whatever the fixture. A fixture takes about twenty
// times longer under -race (TestCutEvidence: 250 s for 17 fixtures, 48 s
// for all 66 without), and one in four of them kept the package's race run
// past 20 minutes on two cores: one in 32 is three of the 66 incidents.
const raceSample = 32

// sampled returns dirs, or under the race detector one in raceSample of
// them (the first, then every raceSample-th), and logs which.
func sampled(t *testing.T, dirs []string) []string {
	t.Helper()
	return testutil.RaceSample(t, raceSample, dirs)
}

// atLeast scales a minimum count over every fixture to the fixtures
// sampled: want×sampled/all, at least 1.
func atLeast(want, sampled, all int) int {
	if all == 0 || sampled == all {
		return want
	}
	return max(1, want*sampled/all)
}
