package lazyre_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// A Regexp is not compiled until it is used: a bad expression panics at
// its first use, not from New.
func TestCompiledOnFirstUse(t *testing.T) {
	bad := lazyre.New(`(unclosed`)
	if !slices.Contains(lazyre.All(), bad) {
		t.Fatal("All does not list a Regexp New returned")
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic at its first use")
		}
	}()
	bad.MatchString("x")
}

// Goroutines using one Regexp at once share one compiled expression.
func TestConcurrentFirstUse(t *testing.T) {
	r := lazyre.New(`^(\d+)-(\d+)$`)
	var wg sync.WaitGroup
	got := make([][]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = r.FindStringSubmatch(fmt.Sprintf("%d-%d", i, i*2)) })
	}
	wg.Wait()
	for i, m := range got {
		if want := []string{fmt.Sprintf("%d-%d", i, i*2), fmt.Sprint(i), fmt.Sprint(i * 2)}; !slices.Equal(m, want) {
			t.Errorf("goroutine %d: %q, want %q", i, m, want)
		}
	}
	first := r.Re()
	if again := r.Re(); again != first {
		t.Error("Re compiled the expression twice")
	}
}

// The methods give what regexp.Regexp's give.
func TestMethods(t *testing.T) {
	r := lazyre.New(`(?P<word>[a-z]+)(\d)`)
	s := "ab1 cd2 ef"
	re := r.Re()
	checks := []struct {
		name      string
		got, want any
	}{
		{"MatchString", r.MatchString(s), re.MatchString(s)},
		{"Match", r.Match([]byte(s)), re.Match([]byte(s))},
		{"FindString", r.FindString(s), re.FindString(s)},
		{"FindStringSubmatchIndex", r.FindStringSubmatchIndex(s), re.FindStringSubmatchIndex(s)},
		{"FindAll", r.FindAll([]byte(s), -1), re.FindAll([]byte(s), -1)},
		{"FindAllSubmatch", r.FindAllSubmatch([]byte(s), -1), re.FindAllSubmatch([]byte(s), -1)},
		{"FindAllStringSubmatch", r.FindAllStringSubmatch(s, -1), re.FindAllStringSubmatch(s, -1)},
		{"FindAllStringSubmatchIndex", r.FindAllStringSubmatchIndex(s, -1), re.FindAllStringSubmatchIndex(s, -1)},
		{"ReplaceAllString", r.ReplaceAllString(s, "<$word>"), "<ab> <cd> ef"},
		{"ReplaceAllStringFunc", r.ReplaceAllStringFunc(s, func(string) string { return "x" }), "x x ef"},
		{"String", r.String(), re.String()},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

func ExampleNew() {
	// Declared as a package variable, it costs nothing at start-up.
	var portRe = lazyre.New(`:(\d{1,5})$`)
	fmt.Println(portRe.FindStringSubmatch("10.0.0.1:8080")[1])
	// Output: 8080
}
