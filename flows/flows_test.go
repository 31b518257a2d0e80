package flows

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

var t0 = time.Date(2022, 9, 15, 19, 9, 2, 0, time.UTC)

func attempt(client, server string, o model.Outcome, state string, start, rtt time.Duration, syns int) model.Attempt {
	a := model.Attempt{
		Pos:       model.Pos{File: "c.pcap", Frame: 1},
		Client:    netip.MustParseAddrPort(client),
		Server:    netip.MustParseAddrPort(server),
		Outcome:   o,
		ConnState: state,
		Start:     t0.Add(start),
	}
	for i := range syns {
		a.SYN = append(a.SYN, model.Seg{Frame: 1 + i, Time: a.Start.Add(time.Duration(i) * time.Second)})
	}
	if rtt > 0 {
		a.SYNACK = []model.Seg{{Frame: 10, Time: a.Start.Add(rtt)}}
	}
	return a
}

func snapshot() *model.Snapshot {
	return &model.Snapshot{
		Captures: []model.CaptureInfo{
			{File: "a.pcap", Counts: model.Counts{Packets: 10, SYNOnly: 4, TCPStreams: 3, Established: 1}},
			{File: "b.pcap", Counts: model.Counts{Packets: 5, SYNOnly: 1, TCPStreams: 1, Refused: 1}},
		},
		Attempts: []model.Attempt{
			attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeEstablished, "SF", 0, 2*time.Millisecond, 1),
			attempt("10.0.0.2:40001", "10.0.0.9:80", model.OutcomeSynAckClientRST, "RSTO", time.Second, 4*time.Millisecond, 2),
			attempt("10.0.0.1:40002", "10.0.0.9:80", model.OutcomeEstablished, "SF", 2*time.Second, 10*time.Millisecond, 1),
			attempt("10.0.0.1:40003", "10.0.0.8:443", model.OutcomeRefused, "REJ", 3*time.Second, 0, 1),
			attempt("10.0.0.3:40004", "10.0.0.8:443", model.OutcomeUnanswered, "S0", 4*time.Second, 0, 3),
		},
	}
}

func TestBuild(t *testing.T) {
	tab := Build(snapshot(), Filter{})
	if tab.Summary.Packets != 15 || tab.Summary.SYNOnly != 5 || tab.Summary.TCPStreams != 4 || tab.Summary.Refused != 1 {
		t.Errorf("summary = %+v", tab.Summary)
	}
	if len(tab.Attempts) != 5 || len(tab.Endpoints) != 2 {
		t.Fatalf("%d attempts, %d endpoints", len(tab.Attempts), len(tab.Endpoints))
	}
	web, tls := tab.Endpoints[0], tab.Endpoints[1]
	if web.Server.String() != "10.0.0.9:80" || web.Attempts != 3 || web.Clients != 2 || web.Established != 2 || web.Reset != 1 || web.SYNRetx != 1 {
		t.Errorf("web endpoint = %+v", web)
	}
	if web.MedianSYNACK != 4*time.Millisecond || web.MedianSYNACKMillis != 4 {
		t.Errorf("web median = %v (%v ms)", web.MedianSYNACK, web.MedianSYNACKMillis)
	}
	if tls.Server.String() != "10.0.0.8:443" || tls.Refused != 1 || tls.Unanswered != 1 || tls.SYNRetx != 2 || tls.MedianSYNACK != 0 {
		t.Errorf("tls endpoint = %+v", tls)
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		ports []string
		state []string
		since time.Duration
		until time.Duration
		want  []uint16 // client ports kept
	}{
		{name: "host as client", hosts: []string{"10.0.0.1"}, want: []uint16{40000, 40002, 40003}},
		{name: "host as server", hosts: []string{"10.0.0.8"}, want: []uint16{40003, 40004}},
		{name: "server port", ports: []string{"80"}, want: []uint16{40000, 40001, 40002}},
		{name: "client port", ports: []string{"40004"}, want: []uint16{40004}},
		{name: "outcome", state: []string{"synack_client_rst"}, want: []uint16{40001}},
		{name: "zeek states", state: []string{"S0", "REJ"}, want: []uint16{40003, 40004}},
		{name: "time window", since: time.Second, until: 3 * time.Second, want: []uint16{40001, 40002}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.hosts, tt.ports, tt.state)
			if err != nil {
				t.Fatal(err)
			}
			if tt.since > 0 {
				f.Since = t0.Add(tt.since)
			}
			if tt.until > 0 {
				f.Until = t0.Add(tt.until)
			}
			var got []uint16
			for _, a := range Build(snapshot(), f).Attempts {
				got = append(got, a.Client.Port())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("kept %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("kept %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	for _, tt := range []struct {
		hosts, ports, states []string
		want                 string
	}{
		{hosts: []string{"10.0.0"}, want: `--host "10.0.0"`},
		{ports: []string{"70000"}, want: `--port "70000": not a port number`},
		{states: []string{"bogus"}, want: `--state "bogus": not an outcome`},
	} {
		_, err := ParseFilter(tt.hosts, tt.ports, tt.states)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := Build(snapshot(), Filter{}).Write(&b, "csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	if want := "c.pcap#frame=1,2022-09-15T19:09:03.000000Z,10.0.0.2:40001,10.0.0.9:80,synack_client_rst,RSTO,,#1 #2,#10,,1,4.000,0,0,0"; lines[2] != want {
		t.Errorf("row 2 = %s\nwant    %s", lines[2], want)
	}
}

// A cell from the bundle that a spreadsheet would take for a formula (a
// capture named "=HYPERLINK(...).pcap") starts with an apostrophe;
// numbers and lone signs are kept.
func TestWriteCSVInert(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://evil.example\").pcap#frame=1": "'=HYPERLINK(\"http://evil.example\").pcap#frame=1",
		"@SUM(A1)": "'@SUM(A1)", "+1+2": "'+1+2", "-2+3": "'-2+3", "\tx": "'\tx", "\rx": "'\rx",
		"-": "-", "-1.5": "-1.5", "+3": "+3", "c.pcap#frame=1": "c.pcap#frame=1", "": "",
	} {
		if got := inertCell(in); got != want {
			t.Errorf("inertCell(%q) = %q, want %q", in, got, want)
		}
	}
	snap := snapshot()
	for i := range snap.Attempts {
		snap.Attempts[i].Pos.File = "=cmd.pcap"
	}
	var b bytes.Buffer
	if err := Build(snap, Filter{}).Write(&b, "csv"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		if !strings.HasPrefix(line, "'=cmd.pcap") {
			t.Errorf("row %q starts with a formula", line)
		}
	}
}

// TestOutOfRangeTimes writes a table whose times RFC 3339 cannot hold (a
// pcapng timestamp past the year 9999) in every format: the year is
// clamped, the snapshot is left as it was, and nothing fails.
func TestOutOfRangeTimes(t *testing.T) {
	far := time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC)
	snap := snapshot()
	snap.Captures[1].First, snap.Captures[1].Last = far, far
	a := &snap.Attempts[3]
	a.Start, a.End = far, far.Add(time.Second)
	a.SYN = []model.Seg{{Frame: 7, Time: far}}
	a.ServerRST = []model.Seg{{Frame: 8, Time: far.Add(time.Millisecond)}}
	a.FirstAck = &model.Seg{Frame: 9, Time: far}
	a.ClientData = &model.DataSizes{MaxSent: 9000, Retx: []model.Seg{{Frame: 10, Time: far}}}
	tab := Build(snap, Filter{})
	n, first := tab.OutOfRange()
	if n != 8 || first.String() != "b.pcap" {
		t.Errorf("OutOfRange = %d at %s, want 8 at b.pcap", n, first)
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := tab.Write(&buf, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		want := map[string]int{"json": 8, "csv": 1, "table": 1}[format]
		if got := strings.Count(buf.String(), "9999-06-07T08:09:1"); got != want {
			t.Errorf("%s: %d clamped times, want %d:\n%s", format, got, want, buf.String())
		}
		if strings.Contains(buf.String(), "12345-") {
			t.Errorf("%s: a time with a five-digit year was written", format)
		}
	}
	if !snap.Attempts[3].SYN[0].Time.Equal(far) || !snap.Attempts[3].FirstAck.Time.Equal(far) || !snap.Captures[1].First.Equal(far) ||
		!snap.Attempts[3].ClientData.Retx[0].Time.Equal(far) {
		t.Error("writing changed the snapshot's times")
	}
	if n, _ := Build(snapshot(), Filter{}).OutOfRange(); n != 0 {
		t.Errorf("%d times out of range in an ordinary table", n)
	}
}

// TestWriteEscapes checks that node and file names cannot add lines to
// the table or CSV forms, nor put an ESC byte in them.
func TestWriteEscapes(t *testing.T) {
	snap := snapshot()
	for i := range snap.Attempts {
		snap.Attempts[i].Node = "node\x1b[2J\n10.0.0.66:1 forged"
		snap.Attempts[i].Pos.File = "c\r\n.pcap"
	}
	tab := Build(snap, Filter{})
	for _, format := range []string{"table", "csv"} {
		var buf bytes.Buffer
		if err := tab.Write(&buf, format); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.ContainsAny(out, "\x1b\r") || strings.Contains(out, "\n10.0.0.66") {
			t.Errorf("%s output holds a control character or a forged line:\n%q", format, out)
		}
		if !strings.Contains(out, `node\x1b[2J\n10.0.0.66:1 forged`) {
			t.Errorf("%s output lacks the escaped node name:\n%s", format, out)
		}
	}
}

func TestNilArguments(t *testing.T) {
	tab := Build(nil, Filter{})
	if tab == nil || len(tab.Attempts) != 0 || tab.Captures == nil {
		t.Fatalf("Build(nil) = %+v", tab)
	}
	var buf bytes.Buffer
	for _, format := range Formats {
		if err := tab.Write(&buf, format); err != nil {
			t.Errorf("%s: empty table: %v", format, err)
		}
	}
	var none *Table
	if n, _ := none.OutOfRange(); n != 0 {
		t.Error("a nil table has times")
	}
	if err := none.Write(&buf, "json"); err == nil {
		t.Error("a nil table was written")
	}
	if err := tab.Write(nil, "json"); err == nil {
		t.Error("a table was written to a nil writer")
	}
	if err := tab.Write(&buf, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
	f := Filter{}
	if f.Match(nil) {
		t.Error("a nil attempt matches")
	}
}

// TestSummaryAddsEveryCounter checks that the summary is the sum of the
// captures' counters, each of them: a counter left out of the sum shows 0
// while the captures' own counts are right.
func TestSummaryAddsEveryCounter(t *testing.T) {
	var a, b model.Counts
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		va.Field(i).SetInt(int64(i + 1))
		vb.Field(i).SetInt(int64(100 * (i + 1)))
	}
	tab := Build(&model.Snapshot{Captures: []model.CaptureInfo{{File: "a.pcap", Counts: a}, {File: "b.pcap", Counts: b}}}, Filter{})
	vs := reflect.ValueOf(tab.Summary)
	for i := range vs.NumField() {
		if got, want := vs.Field(i).Int(), int64(101*(i+1)); got != want {
			t.Errorf("summary %s = %d, want %d", vs.Type().Field(i).Name, got, want)
		}
	}
}

func TestSummaryLineICMPv6(t *testing.T) {
	snap := &model.Snapshot{Captures: []model.CaptureInfo{
		{File: "a.pcap", Counts: model.Counts{ICMP6Unreach: 2, ICMP6Redirect: 1, ICMPUnreach: 4}},
		{File: "b.pcap", Counts: model.Counts{ICMP6Unreach: 3}},
	}}
	var out bytes.Buffer
	if err := Build(snap, Filter{}).Write(&out, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "4 ICMP unreachable, 0 ICMP redirects, 5 ICMPv6 unreachable, 1 ICMPv6 redirects") {
		t.Errorf("summary line = %q", out.String())
	}
}

// A Builder's table is the same each time it is asked for: the endpoints
// it sorts busiest first are its own copy, and each keeps its median and
// clients.
func TestBuilderTableAgain(t *testing.T) {
	b := NewBuilder(Filter{})
	for _, a := range []model.Attempt{
		attempt("10.0.0.1:40000", "10.0.0.8:443", model.OutcomeEstablished, "SF", 0, 2*time.Millisecond, 1),
		attempt("10.0.0.2:40001", "10.0.0.9:80", model.OutcomeEstablished, "SF", time.Second, 5*time.Millisecond, 1),
		attempt("10.0.0.3:40002", "10.0.0.9:80", model.OutcomeEstablished, "SF", 2*time.Second, 7*time.Millisecond, 1),
	} {
		b.Add(&a)
	}
	first := b.Table(nil)
	want := []string{"10.0.0.9:80 2 clients 6ms", "10.0.0.8:443 1 clients 2ms"}
	for i := range 2 {
		tab := first
		if i > 0 {
			tab = b.Table(nil)
		}
		var got []string
		for _, e := range tab.Endpoints {
			got = append(got, fmt.Sprintf("%s %d clients %v", e.Server, e.Clients, e.MedianSYNACK))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("table %d: endpoints %q, want %q", i+1, got, want)
		}
	}
}

// A Builder counts each endpoint's attempts and distinct clients whatever
// the order they come in: runs to one endpoint from one client (counted
// without a lookup), endpoints and clients interleaved, and one server
// seen from two nodes.
func TestBuilderRuns(t *testing.T) {
	servers := []string{"10.0.0.8:443", "10.0.0.9:80"}
	clients := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}
	rng := rand.New(rand.NewPCG(3, 4))
	b := NewBuilder(Filter{})
	type key struct{ node, server string }
	attempts, seen := map[key]int{}, map[key]map[string]bool{}
	for i := range 500 {
		k := key{[]string{"", "node-b"}[rng.IntN(2)], servers[rng.IntN(2)]}
		c := clients[rng.IntN(len(clients))]
		for range 1 + rng.IntN(4) { // a run
			a := attempt(fmt.Sprintf("%s:%d", c, 30000+i), k.server, model.OutcomeEstablished, "SF", 0, time.Millisecond, 1)
			a.Node = k.node
			b.Add(&a)
			attempts[k]++
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][c] = true
		}
	}
	tab := b.Table(nil)
	if len(tab.Endpoints) != len(attempts) {
		t.Fatalf("%d endpoints, want %d", len(tab.Endpoints), len(attempts))
	}
	for _, e := range tab.Endpoints {
		k := key{e.Node, e.Server.String()}
		if e.Attempts != attempts[k] || e.Clients != len(seen[k]) {
			t.Errorf("%v: %d attempts from %d clients, want %d from %d", k, e.Attempts, e.Clients, attempts[k], len(seen[k]))
		}
	}
}

// The summary names SYN copies by what tells them, their time, not by a
// cause: a SYN within 100 ms of the one before may be one SYN seen on
// two interfaces, or one a stack sent twice.
func TestSummarySYNCopies(t *testing.T) {
	a := attempt("10.0.0.1:40000", "10.0.0.9:80", model.OutcomeUnanswered, "S0", 0, 0, 1)
	a.SYN = append(a.SYN, model.Seg{Frame: 2, Time: a.Start.Add(10 * time.Millisecond)},
		model.Seg{Frame: 3, Time: a.Start.Add(1010 * time.Millisecond)})
	snap := &model.Snapshot{Captures: []model.CaptureInfo{{File: "a.pcap", Counts: model.Counts{SYNRetx: 2}}},
		Attempts: []model.Attempt{a}}
	line := Build(snap, Filter{}).summaryLine()
	if want := "2 SYN retransmissions as tshark counts them, 1 of them copies, sent or seen within 100ms of the SYN before,"; !strings.Contains(line, want) {
		t.Errorf("summary %q, want %q in it", line, want)
	}
}
