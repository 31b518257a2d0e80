package text

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestShareHead(t *testing.T) {
	head := []byte("a\nb\n\nc\nd\ne\n")
	type key struct{}
	calls := 0
	count := func() int { calls++; return calls }

	// Not shared: worked out on each call.
	if a, b := HeadValue(head, key{}, count), HeadValue(head, key{}, count); a != 1 || b != 2 {
		t.Errorf("unshared: %d, %d, want 1, 2", a, b)
	}

	done := ShareHead(head)
	inner := ShareHead(head) // nested
	if a, b := HeadValue(head, key{}, count), HeadValue(head, key{}, count); a != 3 || b != 3 {
		t.Errorf("shared: %d, %d, want 3, 3", a, b)
	}
	// Another key is worked out apart.
	if v := HeadValue(head, struct{ k int }{1}, func() string { return "x" }); v != "x" {
		t.Errorf("another key: %q", v)
	}
	// The same bytes elsewhere are another head.
	other := slices.Clone(head)
	if v := HeadValue(other, key{}, count); v != 4 {
		t.Errorf("a copy of the head: %d, want 4", v)
	}
	// So is a shorter slice of it.
	if v := HeadValue(head[:3], key{}, count); v != 5 {
		t.Errorf("a part of the head: %d, want 5", v)
	}
	inner()
	if v := HeadValue(head, key{}, count); v != 3 {
		t.Errorf("after the inner done: %d, want 3", v)
	}
	done()
	if v := HeadValue(head, key{}, count); v != 6 {
		t.Errorf("after done: %d, want 6", v)
	}
}

// TestSharedHeadLines checks that HeadLines gives the same lines shared
// as not, whatever the max of the calls before.
func TestSharedHeadLines(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "line %d\n\n", i)
	}
	head := []byte(b.String())
	maxes := []int{0, 3, 1, 50, 49, 200, 10, 51, 2}
	done := ShareHead(head)
	defer done()
	for _, max := range maxes {
		got := HeadLines(head, max)
		if want := splitHead(head, max); !slices.Equal(got, want) {
			t.Errorf("max %d: %d lines, want %d", max, len(got), len(want))
		}
		if cap(got) != len(got) {
			t.Errorf("max %d: room to append into the shared lines", max)
		}
	}
}

// TestSharedSniffLines checks that SniffLines judges the same lines
// shared as not, when callers of a smaller max come first.
func TestSharedSniffLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ sysctl -a\n")
	for i := range 300 {
		fmt.Fprintf(&b, "net.x%d = 1\n", i)
	}
	head := []byte(b.String())
	sniff := func(max int) [2]int {
		hits, total, _ := SniffLines(head, max, func(string) bool { return true }, func(l string) Match {
			if strings.Contains(l, " = ") {
				return Hit
			}
			return Miss
		})
		return [2]int{hits, total}
	}
	maxes := []int{20, 200, 5, 300}
	var want [][2]int
	for _, max := range maxes {
		want = append(want, sniff(max))
	}
	done := ShareHead(head)
	defer done()
	for i, max := range maxes {
		if got := sniff(max); got != want[i] {
			t.Errorf("max %d: %v shared, %v alone", max, got, want[i])
		}
	}
}
