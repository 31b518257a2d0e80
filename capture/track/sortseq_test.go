package track

import (
	"math"
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

// creationOrder sorts live streams' keys by their distinct creation
// orders, those that fit in 32 bits (sorted as numbers) and those that do
// not (sorted with a comparison), shuffled and sorted already, and each
// key keeps its ref.
func TestCreationOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, 5000} {
		for _, base := range creationBases() {
			for round := range 3 {
				seqOf := map[uint32]int{}
				keys := make([]uint64, n)
				wide := false
				for i := range keys {
					seq, ref := base+7*i, uint32(i*13+5)
					if i%3 == 0 {
						ref |= parkedRef
					}
					seqOf[ref] = seq
					keys[i], wide = liveKey(seq, ref), wide || !narrowSeq(seq)
				}
				if round > 0 {
					r.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				}
				creationOrder(keys, wide, func(ref uint32) int { return seqOf[ref] })
				if len(keys) != n {
					t.Fatalf("n=%d base=%d: %d keys", n, base, len(keys))
				}
				for k, key := range keys {
					if got, want := seqOf[uint32(key)], base+7*k; got != want {
						t.Fatalf("n=%d base=%d round %d: key %d is of the stream created %d, want %d", n, base, round, k, got, want)
					}
				}
			}
		}
	}
}

// creationBases are the first creation orders TestCreationOrder tries: past 32
// bits too where an int holds them.
func creationBases() []int {
	b := []int{0, 1 << 20}
	for _, wide := range []uint64{1<<32 - 50, 1 << 40} {
		if wide <= math.MaxInt {
			b = append(b, int(wide))
		}
	}
	return b
}
