package main

import (
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// raceSample is how many fixtures of every-fixture tests run under the race
// detector: one in raceSample. `make test` runs those tests again without
// -race over every fixture: what they check is the output of each fixture,
// while the race detector needs only some of them to see the code run.
const raceSample = 4

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
