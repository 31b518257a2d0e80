package analyzertest

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The phrases of a want file are chosen by hand, or by -update for a
// finding the file does not hold yet: the values the finding rests on
// (addresses, ports, ranges, settings, chains, counts) that its cause and
// fix name, those of its facts first.

// maxPhrases bounds how many phrases -update chooses for a new finding.
const maxPhrases = 3

// namedThings match what a cause or fix names exactly: an address (with a
// port or prefix length), a port range, a dotted setting, a flag with its
// value, a netfilter chain, a quoted command.
var namedThings = []*regexp.Regexp{
	regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2}|:\d{1,5})?\b`),
	regexp.MustCompile(`\b\d{2,5}-\d{2,5}\b`),
	regexp.MustCompile(`\b[a-z][a-z0-9_-]*(?:\.[a-z0-9_*-]+){2,}\b`),
	regexp.MustCompile(`--[a-z][a-z0-9-]+(?:=[^\s,;)'"]+)?`),
	regexp.MustCompile(`\b(?:KUBE|cali|CILIUM)-[A-Za-z0-9-]+\b`),
	regexp.MustCompile("`[^`\n]{3,60}`"),
}

// factStrings returns the values of facts as the words would write them:
// strings, the strings of lists, numbers of two digits or more.
func factStrings(facts map[string]any, rel func(string) string) []string {
	var out []string
	var add func(v any)
	add = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, rel(v))
		case []string:
			for _, s := range v {
				add(s)
			}
		case []any:
			for _, s := range v {
				add(s)
			}
		case int, int32, int64, uint, uint16, uint32, uint64:
			if s := fmt.Sprint(v); len(s) >= 2 {
				out = append(out, s)
			}
		}
	}
	keys := make([]string, 0, len(facts))
	for k := range facts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(facts[k])
	}
	return out
}

// choosePhrases returns up to maxPhrases phrases of f's words worth
// holding it to: values of its facts its cause or fix name first, then
// those its title names, then what its cause or fix name exactly
// (namedThings); values before plain words, longer before shorter. It
// leaves out what its subject or decide already pin, the placeholders of
// a command (XXXX), and a phrase part of another.
func choosePhrases(f wantFinding) []string {
	type cand struct {
		s     string
		score int
	}
	var cs []cand
	seen := map[string]bool{}
	var files []string // a position is the evidence's to pin
	for _, e := range f.Evidence {
		if i := strings.IndexAny(e, " #:"); i > 0 {
			files = append(files, e[:i])
		}
	}
	add := func(s string, fromFacts bool) {
		s = strings.TrimSpace(s)
		if len(s) < 3 || len(s) > 60 || seen[s] ||
			slices.ContainsFunc(files, func(file string) bool { return strings.Contains(s, file) }) || strings.Contains(s, "\n") || strings.Contains(s, "XXXX") ||
			!strings.Contains(f.text, s) || strings.Contains(f.Decide, s) {
			return
		}
		seen[s] = true
		inCause := strings.Contains(f.fix, s) || strings.Contains(f.cause, s)
		score := 0
		switch {
		case fromFacts && inCause:
			score = 6
		case fromFacts && strings.Contains(f.title, s):
			score = 4
		case fromFacts:
			score = 2
		case inCause:
			score = 3
		}
		for _, v := range f.Subject {
			if strings.Contains(v, s) {
				score -= 3
			}
		}
		if !strings.ContainsAny(s, "0123456789") {
			score -= 2 // a name, not a value
		}
		if slices.ContainsFunc(namedThings, func(re *regexp.Regexp) bool { return re.FindString(s) == s }) {
			score++
		}
		cs = append(cs, cand{s, score})
	}
	for _, s := range f.facts {
		add(s, true)
		for _, re := range namedThings {
			for _, t := range re.FindAllString(s, -1) {
				add(t, true)
			}
		}
	}
	for _, re := range namedThings {
		for _, s := range re.FindAllString(f.cause+"\n"+f.fix, -1) {
			add(strings.Trim(s, "`"), false)
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(len(b.s), len(a.s)))
	})
	var out []string
	for _, c := range cs {
		if len(out) == maxPhrases || c.score <= 0 {
			break
		}
		if slices.ContainsFunc(out, func(o string) bool { return strings.Contains(o, c.s) || strings.Contains(c.s, o) }) {
			continue
		}
		out = append(out, c.s)
	}
	return out
}

// keepPhrases returns the phrases of old that g's words still contain
// and those dropped; when none is kept, it chooses g's anew.
func keepPhrases(g, old wantFinding) (kept, dropped []string) {
	for _, p := range old.Says {
		if strings.Contains(g.text, p) {
			kept = append(kept, p)
		} else {
			dropped = append(dropped, p)
		}
	}
	if len(kept) == 0 {
		kept = choosePhrases(g)
	}
	return kept, dropped
}
