package kube

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// wordsFit says no only where no split of the words into the cells
// exists, and yes where one does when every cell takes any words (the
// fitting cell by cell then succeeds).
func TestWordsFit(t *testing.T) {
	anyWords := func(string) bool { return true }
	// splits reports whether n words can be split into specs' cells,
	// each taking between its least and its most.
	var splits func(specs []cellSpec, n int) bool
	splits = func(specs []cellSpec, n int) bool {
		if len(specs) == 0 {
			return n == 0
		}
		for k := specs[0].min; k <= n && (specs[0].max < 0 || k <= specs[0].max); k++ {
			if splits(specs[1:], n-k) {
				return true
			}
		}
		return false
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		specs := make([]cellSpec, 1+r.IntN(5))
		for i := range specs {
			specs[i] = cellSpec{min: r.IntN(3), max: r.IntN(5) - 1, ok: anyWords}
			if specs[i].max >= 0 && specs[i].max < specs[i].min {
				specs[i].max = specs[i].min
			}
		}
		for n := range 14 {
			_, fitted := fitCells(specs, strings.Fields(strings.Repeat("w ", n)))
			if want := splits(specs, n); wordsFit(specs, n) != want || fitted != want {
				t.Fatalf("specs %+v, %d words: wordsFit %v, fitted %v; a split exists: %v", specs, n, wordsFit(specs, n), fitted, want)
			}
		}
	}
}
