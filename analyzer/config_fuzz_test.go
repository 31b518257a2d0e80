package analyzer

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

var positioned = regexp.MustCompile(`^c\.yaml:[0-9]+: `)

// LoadConfig never panics, and whatever it accepts Suppress can use;
// every error it reports is positioned.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{"", "rules:\n  synack-reset:\n    severity: warning\n",
		"ignore:\n  - rule: synack-reset\n    reason: r\n    expires: 2026-01-01\n",
		"ignore:\n  - address: 10.0.0.0/8\n    object: a/b\n    reason: r\n", "a: &x [*x]\n", "rules: {timewait-churn: {params: {min_timewait: 1e999}}}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := LoadConfig(strings.NewReader(in), "c.yaml", configRules)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !positioned.MatchString(line) {
					t.Fatalf("unpositioned error %q", line)
				}
			}
			return
		}
		c.Suppress([]Finding{{Rule: "synack-reset", Subject: map[string]string{"address": "10.0.0.1:80", "object": "Service a/b"}}}, time.Now())
	})
}
