package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func ruleLines(out []model.RouteRule) []string {
	var s []string
	for _, r := range out {
		s = append(s, fmt.Sprintf("%d %s %d %s not=%v from=%v to=%v iif=%s oif=%s mark=%s %s %s",
			r.Pos.Line, r.Node, r.Priority, r.Family, r.Not, r.From, r.To, r.Iif, r.Oif, r.FwMark, r.Action, r.Table))
	}
	return s
}

// Made by testdata/make-ip-rule.sh, and a real ticket's.
func TestRulesReal(t *testing.T) {
	parsetest.CheckLines(t, "ip-rule.txt", ruleLines(parsetest.ReadFile(t, "parse/testdata/rule/ip-rule.txt", Rules)), []string{
		"2 node-1 0  not=false from=invalid Prefix to=invalid Prefix iif= oif= mark= lookup local",
		"3 node-1 90  not=false from=invalid Prefix to=invalid Prefix iif= oif= mark=0x4000/0x4000 lookup 200",
		"4 node-1 100 inet not=false from=10.1.0.0/16 to=invalid Prefix iif= oif= mark= lookup 100",
		"5 node-1 110  not=true from=invalid Prefix to=invalid Prefix iif=lo oif= mark= lookup 300",
		"6 node-1 120 inet not=false from=invalid Prefix to=10.9.0.0/16 iif= oif= mark= unreachable ",
		"7 node-1 130  not=false from=invalid Prefix to=invalid Prefix iif=eth0 oif=eth1 mark= lookup main",
		"8 node-1 512 inet not=false from=invalid Prefix to=10.0.1.23/32 iif= oif= mark= lookup main",
		"9 node-1 1536 inet not=false from=10.0.1.23/32 to=10.0.0.0/16 iif= oif= mark= lookup 2",
		"10 node-1 32766  not=false from=invalid Prefix to=invalid Prefix iif= oif= mark= lookup main",
		"11 node-1 32767  not=false from=invalid Prefix to=invalid Prefix iif= oif= mark= lookup default",
		"13 node-1 0 inet6 not=false from=invalid Prefix to=invalid Prefix iif= oif= mark= lookup local",
		"14 node-1 140 inet6 not=false from=fd00::/64 to=invalid Prefix iif= oif= mark= lookup 400",
		"15 node-1 32766 inet6 not=false from=invalid Prefix to=invalid Prefix iif= oif= mark= lookup main",
	})
	out := parsetest.ReadFile(t, "fixtures/field/rp-filter-drop--k8s-124587/ip-rule.txt", Rules)
	if len(out) != 3 || out[0].Node != "wrk-01" || out[2].Priority != 32767 || out[2].Table != "default" {
		t.Errorf("field rules %v", ruleLines(out))
	}
}

func TestRulesErrors(t *testing.T) {
	in := "0:\tfrom all lookup local\nx:\tfrom all lookup main\n5:\tfrom 10.0.0.300 lookup 3\n6:\tfrom all\n7:\tfrom all lookup\n"
	out, err := Rules(strings.NewReader(in), "r.txt")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "r.txt:2 r.txt:3 r.txt:4 r.txt:5" {
		t.Errorf("errors at %s: %v", at, err)
	}
	if len(out) != 1 {
		t.Errorf("rules %v", ruleLines(out))
	}
}

func FuzzRules(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"parse/testdata/rule/ip-rule.txt", "fixtures/field/rp-filter-drop--k8s-124587/ip-rule.txt"})
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Rules(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, r := range out {
			if r.Pos.Line == 0 || r.Action == "" {
				t.Fatalf("bad rule %+v", r)
			}
		}
		sniffRule("fuzz.txt", []byte(in))
	})
}
