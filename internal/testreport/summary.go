package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// summary is what the events said of skips and failures.
type summary struct {
	events int
	failed int
	// reasons maps a skip reason to the tests skipped for it.
	reasons map[string][]string
	// last holds each running test's last line of output before its
	// end: the reason it gave t.Skip.
	last map[string]string
	// output holds each running test's output, printed if it fails.
	output map[string][]string
}

// read copies the events' output to out, as go test prints it, and sums
// them up.
func read(r io.Reader, out io.Writer) (*summary, error) {
	s := &summary{reasons: map[string][]string{}, last: map[string]string{}, output: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 || b[0] != '{' {
			// go test writes build errors and the like as text.
			fmt.Fprintf(out, "%s\n", b)
			continue
		}
		var e event
		if err := json.Unmarshal(b, &e); err != nil {
			return s, fmt.Errorf("line %d: not a test event: %w", line, err)
		}
		s.events++
		s.add(e, out)
	}
	return s, sc.Err()
}

func (s *summary) add(e event, out io.Writer) {
	key := e.Package + "." + e.Test
	switch e.Action {
	case "output", "build-output":
		if e.Test == "" {
			// Package lines: "ok", "FAIL", build errors, a panic; the
			// lone PASS that -json's verbose mode adds is not printed.
			if e.Output != "PASS\n" {
				io.WriteString(out, e.Output)
			}
			return
		}
		if strings.HasPrefix(e.Output, "=== ") {
			return
		}
		s.output[key] = append(s.output[key], e.Output)
		if t := strings.TrimSpace(e.Output); t != "" && !strings.HasPrefix(t, "--- ") {
			s.last[key] = t
		}
		return
	case "skip":
		if e.Test != "" { // a package without tests is skipped too
			why := reason(s.last[key])
			s.reasons[why] = append(s.reasons[why], short(e.Package)+"."+e.Test)
		}
	case "fail", "build-fail":
		s.failed++
		// As go test without -v: the output of a failed test only.
		for _, o := range s.output[key] {
			io.WriteString(out, o)
		}
		if e.Test == "" {
			s.unfinished(e.Package, out)
		}
	}
	delete(s.last, key)
	delete(s.output, key)
}

// reason is the skip message without the file:line that t.Skip puts
// before it.
func reason(msg string) string {
	if msg == "" {
		return "no reason given"
	}
	if i := strings.Index(msg, ".go:"); i >= 0 {
		if j := strings.Index(msg[i:], ": "); j >= 0 {
			msg = msg[i+j+2:]
		}
	}
	return msg
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/netmortem/netmortem/")
}

// write says how many tests were skipped, and for each reason which.
func (s *summary) write(w io.Writer) {
	if len(s.reasons) == 0 {
		fmt.Fprintln(w, "skipped: none")
		return
	}
	whys := make([]string, 0, len(s.reasons))
	n := 0
	for why, tests := range s.reasons {
		whys = append(whys, why)
		n += len(tests)
	}
	sort.Slice(whys, func(i, j int) bool {
		a, b := s.reasons[whys[i]], s.reasons[whys[j]]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return whys[i] < whys[j]
	})
	fmt.Fprintf(w, "skipped: %s, for %s:\n", plural(n, "test"), plural(len(whys), "reason"))
	for _, why := range whys {
		tests := s.reasons[why]
		sort.Strings(tests)
		list := strings.Join(tests[:min(3, len(tests))], ", ")
		if len(tests) > 3 {
			list += fmt.Sprintf(" and %d more", len(tests)-3)
		}
		fmt.Fprintf(w, "  %d: %s (%s)\n", len(tests), why, list)
	}
}

// plural says n things: "1 test", "3 tests".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// unfinished prints the output of the tests of pkg that never ended: a
// package that timed out or crashed ends without their events, and the
// panic that says why (test2json gives it to the test that ran last) is
// among their output.
func (s *summary) unfinished(pkg string, out io.Writer) {
	var keys []string
	for k := range s.output {
		if strings.HasPrefix(k, pkg+".") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "--- UNFINISHED: %s\n", strings.TrimPrefix(k, pkg+"."))
		for _, o := range s.output[k] {
			io.WriteString(out, o)
		}
		delete(s.output, k)
		delete(s.last, k)
	}
}
