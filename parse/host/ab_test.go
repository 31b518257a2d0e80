package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The "Before" ab run of kubernetes/kubernetes PR 71114, cut after its
// Connect row: connects at the 1 s SYN retransmission.
func TestABReal(t *testing.T) {
	const file = "fixtures/field/ipvs-conn-reuse-delay--k8s-pr-71114/ab.txt"
	out := parsetest.ReadFile(t, file, AB)
	var got []string
	for _, c := range out {
		got = append(got, fmt.Sprintf("%d %s c=%d n=%d failed=%d %d/%d/%d/%d", c.Pos.Line, c.Target, c.Concurrency,
			c.Requests, c.Failed, c.Min, c.Mean, c.Median, c.Max))
	}
	parsetest.CheckLines(t, file, got, []string{"21 10.8.0.163:8080 c=300 n=48983 failed=0 0/722/999/3009"})
}

// A Connect row of four numbers and one of a word are reported at their
// lines; a report by host name keeps the name without a target.
func TestABErrors(t *testing.T) {
	in := "Server Hostname:        web\nServer Port:            80\nConnect:        0  1 0.5\n" +
		"Connect:        0  1 x 1 2\nConnect:        0    1   0.5      1       7\n"
	out, err := AB(strings.NewReader(in), "ab.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "ab.txt:3 ab.txt:4" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 1 || out[0].Host != "web" || out[0].Target.IsValid() || out[0].Max != 7 {
		t.Errorf("got %+v", out)
	}
}

func FuzzAB(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/ipvs-conn-reuse-delay--k8s-pr-71114/ab.txt"})
	f.Add("Server Hostname: ::1\nServer Port: 99999\nConnect: 1e308 -1 NaN 2 3\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := AB(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, c := range out {
			if c.Pos.Line == 0 || c.Min < 0 || c.Max < 0 || c.Median < 0 {
				t.Fatalf("bad report: %+v", c)
			}
		}
		sniffAB("fuzz.txt", []byte(in))
	})
}
