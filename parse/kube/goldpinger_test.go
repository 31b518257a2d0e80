package kube_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/kube"
)

const goldpingerReal = "fixtures/real/troubleshoot/troubleshoot-testdata_goldpinger-checkall-with-error_3-nodes-cross-node-timeouts.json"

// TestGoldpinger reads the check_all of three goldpinger pods on three
// nodes that reach themselves and time out to each other, as troubleshoot's
// goldpinger collector stored it.
func TestGoldpinger(t *testing.T) {
	checks := parsetest.ReadFile(t, goldpingerReal, kube.Goldpinger)
	var got []string
	for _, c := range checks {
		got = append(got, fmt.Sprintf("%d %s(%s on %s) -> %s(%s on %s) ok=%v %d %v %s %q",
			c.Pos.Line, c.From, c.FromIP, c.FromHost, c.To, c.ToIP, c.ToHost, c.OK, c.Status, c.Latency,
			c.Time.Format("15:04:05.000"), c.Error))
	}
	parsetest.CheckLines(t, goldpingerReal, got, []string{
		`26 goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) -> goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) ok=true 200 0s 18:56:15.316 ""`,
		`36 goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) -> goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) ok=false 504 300ms 18:56:38.170 "Get \"http://10.44.0.9:80/ping\": context deadline exceeded"`,
		`45 goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) -> goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) ok=false 504 300ms 18:56:15.977 "Get \"http://10.44.1.2:80/ping\": context deadline exceeded"`,
		`63 goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) -> goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) ok=false 504 300ms 18:56:22.113 "Get \"http://10.44.2.2:80/ping\": context deadline exceeded"`,
		`72 goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) -> goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) ok=true 200 0s 18:56:41.971 ""`,
		`82 goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) -> goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) ok=false 504 300ms 18:56:23.265 "Get \"http://10.44.1.2:80/ping\": context deadline exceeded"`,
		`100 goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) -> goldpinger-m3fzr(10.44.2.2 on 100.72.0.13) ok=false 504 300ms 18:56:42.398 "Get \"http://10.44.2.2:80/ping\": context deadline exceeded"`,
		`109 goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) -> goldpinger-q7w2n(10.44.0.9 on 100.72.0.11) ok=false 504 300ms 18:56:14.628 "Get \"http://10.44.0.9:80/ping\": context deadline exceeded"`,
		`118 goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) -> goldpinger-x5kdl(10.44.1.2 on 100.72.0.12) ok=true 200 0s 18:56:15.259 ""`,
	})
}

// TestGoldpingerErrors: a checker that could not run its checks is a
// warning at its line, and the other checkers' results are kept; text that
// is not check_all is a positioned error.
func TestGoldpingerErrors(t *testing.T) {
	in := `{"hosts": [],
 "responses": {
  "a": {"OK": false, "error": "Get \"http://10.0.0.1:8080/check\": connection refused"},
  "b": {"OK": true, "response": {"podResults": {"a": {"OK": true, "status-code": 200}}}}
 }
}`
	checks, err := kube.Goldpinger(strings.NewReader(in), "check_all.json")
	if len(checks) != 1 || checks[0].From != "b" || checks[0].To != "a" || !checks[0].OK || checks[0].Pos.Line != 4 {
		t.Errorf("checks %+v", checks)
	}
	if err == nil || err.Error() != `check_all.json:3: bad value: a could not run its checks: Get "http://10.0.0.1:8080/check": connection refused` {
		t.Errorf("error %v", err)
	}
	for _, bad := range []string{`{"responses": [1, 2]}`, `{"responses": {"a": `, `[]`} {
		_, err := kube.Goldpinger(strings.NewReader(bad), "x.json")
		parsetest.CheckFuzzErrors(t, err, "x.json")
		if err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSniffGoldpinger(t *testing.T) {
	parsetest.CheckSniff(t, parse.Formats(), kube.GoldpingerFormat, []string{goldpingerReal},
		append([]string{"fixtures/incidents/ephemeral-nodeport/services.json", "parse/testdata/ipjson/ip-addr.txt"},
			parsetest.OtherHostOutputs...))
}

func FuzzGoldpinger(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{goldpingerReal})
	f.Add(`{"responses": {"a": {"error": "x"}, "b": {"response": {"podResults": {"c": 1}}}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		checks, err := kube.Goldpinger(strings.NewReader(in), "f.json")
		parsetest.CheckFuzzErrors(t, err, "f.json")
		for _, c := range checks {
			if c.Pos.Line < 1 || c.Tool != "goldpinger" {
				t.Fatalf("check %+v", c)
			}
		}
	})
}
