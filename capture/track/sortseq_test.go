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

// creationOrder gives the indices of distinct creation orders in their
// order, those that fit in 32 bits (sorted as numbers) and those that do
// not (sorted with a comparison), shuffled and sorted already.
func TestCreationOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, 5000} {
		for _, base := range []int{0, 1 << 20, 1<<32 - 50, 1 << 40} {
			for round := range 3 {
				seq := make([]int, n)
				for i := range seq {
					seq[i] = base + 7*i
				}
				if round > 0 {
					r.Shuffle(n, func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
				}
				got := creationOrder(seq, func(s int) int { return s })
				if len(got) != n {
					t.Fatalf("n=%d base=%d: %d indices", n, base, len(got))
				}
				for k, i := range got {
					if want := base + 7*k; seq[i] != want {
						t.Fatalf("n=%d base=%d round %d: index %d at %d has %d, want %d", n, base, round, i, k, seq[i], want)
					}
				}
			}
		}
	}
}
