package track

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// TestSortBySeq holds sortBySeq to sorting the attempts by their seq, on
// permutations with cycles of every length, sorted input and one attempt.
func TestSortBySeq(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 100, 4097} {
		for round := range 5 {
			seq := make([]int, n)
			for i := range seq {
				seq[i] = 3 * i
			}
			if round > 0 {
				r.Shuffle(n, func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
			}
			a := make([]model.Attempt, n)
			for i := range a {
				a[i].Packets = seq[i] // each attempt carries its seq
			}
			sortBySeq(a, seq)
			if !slices.IsSorted(seq) {
				t.Fatalf("n=%d: seq not sorted", n)
			}
			for i := range a {
				if a[i].Packets != 3*i || seq[i] != 3*i {
					t.Fatalf("n=%d round %d: at %d attempt of seq %d, seq %d; want %d", n, round, i, a[i].Packets, seq[i], 3*i)
				}
			}
		}
	}
}
