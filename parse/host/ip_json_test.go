package host

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// withoutLine drops the line number that starts each formatted record:
// JSON and text put a record on different lines.
func withoutLine(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		_, rest, _ := strings.Cut(l, " ")
		out[i] = rest
	}
	slices.Sort(out)
	return out
}

// Real ip -j outputs (parse/testdata/make-ip-json.sh) give the records of
// the text ip printed right after them.
func TestIPJSONMatchesText(t *testing.T) {
	const dir = "parse/testdata/ipjson/"
	for _, c := range []struct{ json, text string }{{"ip-j-neigh.txt", "ip-neigh.txt"}, {"ip-j-p-neigh.txt", "ip-neigh.txt"}} {
		got, want := neighLines(parsetest.ReadFile(t, dir+c.json, NeighborsJSON)), neighFile(t, dir+c.text)
		parsetest.CheckLines(t, c.json, withoutLine(got), withoutLine(want))
	}
	got, want := addrLines(parsetest.ReadFile(t, dir+"ip-j-addr.txt", AddrsJSON)), addrFile(t, dir+"ip-addr.txt")
	parsetest.CheckLines(t, "ip-j-addr.txt", withoutLine(got), withoutLine(want))
	for _, c := range []struct{ json, text string }{{"ip-j-route.txt", "ip-route.txt"}, {"ip-6-j-route.txt", "ip-6-route.txt"}} {
		got, want := routeLines(parsetest.ReadFile(t, dir+c.json, RoutesJSON)), routeFile(t, dir+c.text)
		parsetest.CheckLines(t, c.json, withoutLine(got), withoutLine(want))
	}
	if n := len(parsetest.ReadFile(t, dir+"ip-j-route.txt", RoutesJSON)); n != 6 {
		t.Errorf("%d routes, want 6", n)
	}
}

// Each entry is positioned at the line it starts on and by its number:
// ip -j prints them all on one line, ip -j -p one field per line.
func TestIPJSONPositions(t *testing.T) {
	var got []string
	for _, n := range parsetest.ReadFile(t, "parse/testdata/ipjson/ip-j-p-neigh.txt", NeighborsJSON) {
		got = append(got, n.Pos.String())
	}
	if want := "[ip-j-p-neigh.txt:1 (entry 1) ip-j-p-neigh.txt:5 (entry 2) ip-j-p-neigh.txt:10 (entry 3) ip-j-p-neigh.txt:14 (entry 4)]"; fmt.Sprint(got) != want {
		t.Errorf("positions %v, want %s", got, want)
	}
}

func TestIPJSONErrors(t *testing.T) {
	// An entry of another kind is reported by its number; the others are read.
	in := `[{"dst":"10.0.0.1","dev":"eth0","state":["FAILED"]},{"ifname":"eth0","addr_info":[]},{"dst":"10.0.0.2","dev":"eth0","lladdr":"02:00:00:00:00:02","state":["REACHABLE"]}]`
	out, err := NeighborsJSON(strings.NewReader(in), "n.json")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.String() != "n.json:1 (entry 2)" || len(out) != 2 {
		t.Errorf("wrong kind: %v, %d read", err, len(out))
	}
	// Broken JSON ends the reading at its line (here the last: the text
	// ends inside an entry), with what came before.
	in = "[ {\n \"dst\": \"10.0.0.1\", \"dev\": \"eth0\", \"state\": [ \"FAILED\" ]\n },{\n \"dst\": \n"
	out, err = NeighborsJSON(strings.NewReader(in), "n.json")
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 4 || len(out) != 1 {
		t.Errorf("broken: %v, %d read", err, len(out))
	}
	if _, err := RoutesJSON(strings.NewReader(`{"dst":"default"}`), "r.json"); err == nil || !strings.Contains(err.Error(), "r.json:1: ") {
		t.Errorf("not an array: %v", err)
	}
	if _, err := AddrsJSON(strings.NewReader(`[{"ifname":"eth0","addr_info":[{"family":"inet","local":"x","prefixlen":24}]}]`), "a.json"); err == nil {
		t.Error("bad address read without an error")
	}
}

func FuzzIPJSON(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"parse/testdata/ipjson/ip-j-neigh.txt", "parse/testdata/ipjson/ip-j-p-neigh.txt",
		"parse/testdata/ipjson/ip-j-addr.txt", "parse/testdata/ipjson/ip-j-route.txt", "parse/testdata/ipjson/ip-6-j-route.txt"})
	f.Fuzz(func(t *testing.T, in string) {
		n, err := NeighborsJSON(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, x := range n {
			if x.Pos.Line == 0 || !x.IP.IsValid() {
				t.Fatalf("bad neighbor: %+v", x)
			}
		}
		a, err := AddrsJSON(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, x := range a {
			if x.Pos.Line == 0 || !x.Prefix.IsValid() {
				t.Fatalf("bad address: %+v", x)
			}
		}
		r, err := RoutesJSON(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, x := range r {
			if x.Pos.Line == 0 {
				t.Fatalf("bad route: %+v", x)
			}
		}
		for _, fm := range []*format.Format{NeighJSONFormat, AddrJSONFormat, RouteJSONFormat} {
			fm.Sniff("fuzz.txt", []byte(in))
		}
	})
}

func TestIPJSONSyntaxErrorLine(t *testing.T) {
	in := "[ {\n \"dst\": \"10.0.0.1\", \"dev\": \"eth0\", \"state\": [ \"FAILED\" ]\n },{\n \"dst\": ]\n } ]\n"
	_, err := NeighborsJSON(strings.NewReader(in), "n.json")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 4 {
		t.Errorf("%v, want an error at line 4", err)
	}
}
