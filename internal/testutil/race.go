//go:build race

package testutil

// Race says the tests run under the race detector (go test -race). A test
// that repeats one check over many inputs may check a sample under it (see
// RaceSample) when make test runs it whole without it.
const Race = true
