package main

import (
	"testing"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// The parsers' and rules' regular expressions are compiled on first use
// (lazyre): this compiles every one the command holds, so that a bad one
// fails here rather than on the one ticket whose format uses it.
func TestRegexpsCompile(t *testing.T) {
	all := lazyre.All()
	if len(all) < 200 {
		t.Fatalf("%d lazy regular expressions: the parsers' are not all registered", len(all))
	}
	for _, r := range all {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s: %v", r, v)
				}
			}()
			r.Re()
		}()
	}
}
