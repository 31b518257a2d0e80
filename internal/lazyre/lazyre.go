// Package lazyre holds regular expressions compiled the first time they
// are used rather than when the program starts.
//
// netmortem's parsers and rules recognize hundreds of formats, each with
// its own expressions. Compiled as package variables, they cost every run
// several milliseconds before main starts, half the run time of a small
// capture, for the one or two formats a ticket holds. A Regexp from New
// costs nothing until a method is called; it then compiles once, safely
// from several goroutines. It has the methods of regexp.Regexp that
// netmortem calls, which behave as that type's; Re gives the compiled
// expression for the others.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns a Regexp for expr, to be compiled on first use. As with
// regexp.MustCompile, an expression that does not compile panics then,
// and All lets a test compile every one of them at once.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

// All returns every Regexp New returned so far.
func All() []*Regexp {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Regexp(nil), all...)
}

// Re returns the compiled expression, compiling it the first time.
func (r *Regexp) Re() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.Re().Match(b) }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.Re().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Re().FindStringSubmatch(s) }

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.Re().FindStringSubmatchIndex(s) }

// FindAll is regexp.Regexp.FindAll.
func (r *Regexp) FindAll(b []byte, n int) [][]byte { return r.Re().FindAll(b, n) }

// FindAllSubmatch is regexp.Regexp.FindAllSubmatch.
func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte { return r.Re().FindAllSubmatch(b, n) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Re().FindAllStringSubmatch(s, n)
}

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Re().FindAllStringSubmatchIndex(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.Re().ReplaceAllString(src, repl) }

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Re().ReplaceAllStringFunc(src, repl)
}
