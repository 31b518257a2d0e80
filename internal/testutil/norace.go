//go:build !race

package testutil

// Race says the tests run under the race detector (go test -race). Tests
// whose code runs on one goroutine may check a sample under it (see
// RaceSample) when make test runs them whole without it.
const Race = false
