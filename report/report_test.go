package report

import (
	"slices"
	"strings"
	"testing"
)

func TestInputOrder(t *testing.T) {
	paths := []string{"s.txt:160", "b.txt", "s.txt:3", "s.txt", "s.txt:39", "a.tar.gz!x:y"}
	slices.SortStableFunc(paths, func(a, b string) int {
		if inputLess(a, b) {
			return -1
		}
		if inputLess(b, a) {
			return 1
		}
		return 0
	})
	if got := strings.Join(paths, " "); got != "a.tar.gz!x:y b.txt s.txt s.txt:3 s.txt:39 s.txt:160" {
		t.Errorf("order %s", got)
	}
}
