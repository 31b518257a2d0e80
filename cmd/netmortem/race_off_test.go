//go:build !race

package main

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
