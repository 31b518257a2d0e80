package track

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// readWith reads a committed capture through a tracker set up as opts
// say, as capture.Read does: through Feed, on two shards.
func readWith(t *testing.T, rel string, opts Options) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tr := NewTracker("c.pcap", opts)
	tr.SetShards(2)
	err = tr.Feed(func(s *Stage) error {
		var d decode.Decoder
		var rec pcapfile.Record
		for frame := 1; ; frame++ {
			if err := src.Next(&rec); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			link := src.LinkType(rec.Iface)
			if !rec.Wide && s.Hot(link, rec.Data, rec.Cut(), frame, rec.Unix) {
				continue
			}
			p := decode.Packet{Pos: model.Pos{Frame: frame}, Time: rec.Time()}
			if err := d.Decode(link, rec.Data, rec.Cut(), &p); err != nil {
				return err
			}
			s.Add(&p)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Finish()
}

type outcomeKey struct {
	server  string
	outcome model.Outcome
}

// tally counts attempts, SYN retransmissions and clients per server and
// outcome, from the attempts kept and the counters.
type tally struct {
	attempts, retx int
	clients        map[string]bool
}

func tallies(res *Result) map[outcomeKey]*tally {
	m := map[outcomeKey]*tally{}
	get := func(k outcomeKey) *tally {
		if m[k] == nil {
			m[k] = &tally{clients: map[string]bool{}}
		}
		return m[k]
	}
	for _, a := range res.Attempts {
		x := get(outcomeKey{a.Server.String(), a.Outcome})
		x.attempts++
		x.retx += a.SYNRetransmissions()
		x.clients[a.Client.Addr().String()] = true
	}
	for _, st := range res.Endpoints {
		x := get(outcomeKey{st.Server.String(), st.Outcome})
		x.attempts += st.Attempts
		x.retx += st.SYNRetx
		for _, c := range st.ClientAddrs {
			x.clients[c.String()] = true
		}
	}
	return m
}

// Summarizing keeps the first refused and unanswered attempts to each
// server and counts the rest: nothing is lost from the counts.
func TestSummarizeFailures(t *testing.T) {
	for _, tc := range []struct {
		rel        string
		wantFolded int
	}{
		{"fixtures/incidents/stale-dnat/capture.pcap", 7},  // 8 unanswered to one server, the first kept
		{"fixtures/incidents/lb-conflict/capture.pcap", 0}, // ICMP redirects quote its unanswered SYNs
		{"fixtures/captures/handshakes.pcap", 0},           // one attempt per server and outcome
	} {
		rel := tc.rel
		t.Run(filepath.Base(filepath.Dir(rel)), func(t *testing.T) {
			full := readWith(t, rel, Options{})
			sum := readWith(t, rel, Options{Summary: Summary{Enabled: true, FailedSample: 1}})
			if sum.Info.Counts != full.Info.Counts {
				t.Errorf("counts differ:\n%+v\n%+v", sum.Info.Counts, full.Info.Counts)
			}
			want, got := tallies(full), tallies(sum)
			if len(got) != len(want) {
				t.Errorf("%d server/outcome pairs, want %d", len(got), len(want))
			}
			folded := 0
			for k, w := range want {
				g := got[k]
				if g == nil || g.attempts != w.attempts || g.retx != w.retx || len(g.clients) != len(w.clients) {
					t.Errorf("%v: got %+v, want %+v", k, g, w)
				}
			}
			kept := map[outcomeKey]int{}
			for _, a := range sum.Attempts {
				kept[outcomeKey{a.Server.String(), a.Outcome}]++
			}
			for _, st := range sum.Endpoints {
				k := outcomeKey{st.Server.String(), st.Outcome}
				if st.Outcome == model.OutcomeEstablished {
					continue
				}
				folded += st.Attempts
				if kept[k] != 1 {
					t.Errorf("%v: %d kept one by one, want 1 before counting", k, kept[k])
				}
				if st.First.After(st.Last) || st.First.IsZero() {
					t.Errorf("%v: span %v to %v", k, st.First, st.Last)
				}
			}
			if folded != tc.wantFolded {
				t.Errorf("%d failed attempts counted, want %d", folded, tc.wantFolded)
			}
		})
	}
}

// Attempts an ICMP error answers stay one by one whatever the sample: the
// icmp-unreachable rule cites them and syn-unanswered leaves them out.
func TestSummarizeKeepsICMPAnswered(t *testing.T) {
	full := readWith(t, "fixtures/captures/handshakes.pcap", Options{})
	sum := readWith(t, "fixtures/captures/handshakes.pcap", Options{Summary: Summary{Enabled: true, FailedSample: -1}})
	matched := map[int]bool{}
	for _, ev := range full.ICMP {
		if ev.AttemptFrame != 0 {
			matched[ev.AttemptFrame] = true
		}
	}
	if len(matched) == 0 {
		t.Fatal("no ICMP error matched to an attempt in the fixture")
	}
	for _, a := range sum.Attempts {
		if a.Outcome == model.OutcomeRefused || a.Outcome == model.OutcomeUnanswered {
			if !matched[a.Pos.Frame] {
				t.Errorf("attempt at frame %d (%s) kept with a sample of 0", a.Pos.Frame, a.Outcome)
			}
			delete(matched, a.Pos.Frame)
		}
	}
	for f := range matched {
		t.Errorf("attempt at frame %d answered by ICMP was counted, not kept", f)
	}
	failedStats := 0
	for _, st := range sum.Endpoints {
		if st.Outcome != model.OutcomeEstablished {
			failedStats += st.Attempts
		}
	}
	failed := func(res *Result) int {
		n := 0
		for _, a := range res.Attempts {
			if a.Outcome == model.OutcomeRefused || a.Outcome == model.OutcomeUnanswered {
				n++
			}
		}
		return n
	}
	if want := failed(full) - failed(sum); failedStats != want || failedStats == 0 {
		t.Errorf("%d refused and unanswered attempts counted, want %d", failedStats, want)
	}
}

// markUnanswered runs the tracker's arpAnswers over evs (in capture
// order) at once, as the tracker does while it reads.
func markUnanswered(evs []model.ARPEvent, end time.Time) {
	var a arpAnswers
	for i := range evs {
		a.claim(evs, evs[i].IP, evs[i].Time)
		a.ask(evs, i)
	}
	a.finish(evs, end)
}

func TestMarkUnanswered(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	a, x, y := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.99"), netip.MustParseAddr("10.0.0.2")
	req := func(d time.Duration, from, target netip.Addr) model.ARPEvent {
		return model.ARPEvent{Op: "request", Time: at(d), IP: from, Target: target}
	}
	evs := []model.ARPEvent{
		req(0, a, x), req(time.Second, a, x), req(2*time.Second, a, x), // nobody has x
		req(3*time.Second, a, y), {Op: "reply", Time: at(3*time.Second + time.Millisecond), IP: y, Target: a}, // y answers
		{Op: "request", Time: at(4 * time.Second), IP: a, Target: a, Gratuitous: true}, // an announcement asks nobody
		req(5*time.Second, netip.IPv4Unspecified(), y),                                 // a probe (DAD)
		req(6*time.Second, a, y),                                                       // a asks...
		req(6*time.Second+time.Millisecond, y, a),                                      // ... and y, asking in turn, shows it is there
		{Op: "reply", Time: at(6*time.Second + 2*time.Millisecond), IP: a, Target: y},
		req(10*time.Second, a, x),                  // too close to the end to judge
		req(10*time.Second+time.Millisecond, y, x), // the same
	}
	markUnanswered(evs, at(12*time.Second))
	var got []int
	for i, e := range evs {
		if e.Unanswered {
			got = append(got, i)
		}
	}
	if fmt.Sprint(got) != "[0 1 2]" { // the three requests for x
		t.Errorf("unanswered %v, want [0 1 2]", got)
	}
}

func TestUnansweredARPFixture(t *testing.T) {
	res := readWith(t, "fixtures/incidents/vip-unannounced/capture.pcap", Options{})
	var got []string
	for _, e := range res.ARP {
		if e.Unanswered {
			got = append(got, fmt.Sprintf("%d:%s", e.Pos.Frame, e.Target))
		}
	}
	if want := "[3:192.168.210.99 4:192.168.210.99 5:192.168.210.99]"; fmt.Sprint(got) != want {
		t.Errorf("unanswered %v, want %s", got, want)
	}
	ctl := readWith(t, "fixtures/incidents/vip-unannounced-control/capture.pcap", Options{})
	for _, e := range ctl.ARP {
		if e.Unanswered {
			t.Errorf("control: request at frame %d flagged", e.Pos.Frame)
		}
	}
}

// A solicited neighbor advertisement names its solicitor as target, as an
// ARP reply does, and answers the solicitation.
func TestNeighborAdvertisementTarget(t *testing.T) {
	res := readWith(t, "fixtures/captures/handshakes.pcap", Options{})
	var got []string
	for _, e := range res.ARP {
		got = append(got, fmt.Sprintf("%d %s %s>%s unanswered=%v", e.Pos.Frame, e.Op, e.IP, e.Target, e.Unanswered))
	}
	if want := "[55 ns fd99::1>fd99::2 unanswered=false 56 na fd99::2>fd99::1 unanswered=false]"; fmt.Sprint(got) != want {
		t.Errorf("neighbor discovery %v, want %s", got, want)
	}
}

// A scan of thousands of ports keeps a sample per host, not an attempt per
// port: the ports first seen after it are counted together, with their
// port numbers.
func TestSummarizeScan(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	tr := NewTracker("s.pcap", Options{Summary: Summary{Enabled: true}})
	client := netip.MustParseAddrPort("10.0.0.1:40000")
	host := netip.MustParseAddr("10.0.0.2")
	const ports = 5000
	for i := range ports {
		srv := netip.AddrPortFrom(host, uint16(1+i))
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: 2*i + 1}, Time: t0.Add(time.Duration(i) * time.Millisecond), Proto: "tcp",
			Src: client, Dst: srv, Flags: decode.SYN, Seq: uint32(i)})
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: 2*i + 2}, Time: t0.Add(time.Duration(i)*time.Millisecond + 100*time.Microsecond),
			Proto: "tcp", Src: srv, Dst: client, Flags: decode.RST | decode.ACK, Ack: uint32(i) + 1})
	}
	res := tr.Finish()
	if res.Info.Counts.Refused != ports {
		t.Fatalf("%d refused, want %d", res.Info.Counts.Refused, ports)
	}
	kept := hostSampleFactor * FailedSample
	if len(res.Attempts) != kept {
		t.Errorf("%d attempts kept, want the host's sample of %d", len(res.Attempts), kept)
	}
	var hostStats *model.EndpointStats
	for i := range res.Endpoints {
		if res.Endpoints[i].Server.Port() == 0 {
			hostStats = &res.Endpoints[i]
		}
	}
	if hostStats == nil || hostStats.Attempts != ports-kept || len(hostStats.Ports) != ports-kept ||
		hostStats.Ports[0] != uint16(kept+1) || hostStats.Ports[len(hostStats.Ports)-1] != ports || hostStats.Outcome != model.OutcomeRefused {
		t.Fatalf("host counters %+v", hostStats)
	}
	if len(res.Endpoints) != 1 {
		t.Errorf("%d counters, want the host's alone", len(res.Endpoints))
	}
}

// tcpdump -i any where a bridge forwards sees each SYN twice within
// microseconds (fixtures/captures/any-bridge.pcap): the capture's counts
// keep tshark's retransmissions, the attempts call them copies, and so do
// the counters of summary mode.
func TestSYNCopies(t *testing.T) {
	full := readWith(t, "fixtures/captures/any-bridge.pcap", Options{})
	if full.Info.Counts.SYNRetx != 3 || len(full.Attempts) != 3 {
		t.Fatalf("counts %+v, %d attempts", full.Info.Counts, len(full.Attempts))
	}
	// The ARP request seen three times (the bridge floods it), its reply
	// and the ICMP error twice each: one of each is not a copy.
	var arp, icmp []string
	for _, e := range full.ARP {
		arp = append(arp, fmt.Sprintf("%s copy=%v", e.Op, e.Copy))
	}
	for _, e := range full.ICMP {
		icmp = append(icmp, fmt.Sprintf("%s copy=%v", e.What, e.Copy))
	}
	if got := fmt.Sprint(arp, icmp); got != "[request copy=false request copy=true request copy=true reply copy=false reply copy=true] "+
		"[port-unreachable copy=false port-unreachable copy=true]" {
		t.Errorf("events %s", got)
	}
	for _, a := range full.Attempts {
		if len(a.SYN) != 2 || a.SYNRetransmissions() != 0 || a.SYNCopies() != 1 {
			t.Errorf("%s: %d SYNs, %d retransmissions, %d copies; want 2, 0, 1", a.Server, len(a.SYN), a.SYNRetransmissions(), a.SYNCopies())
		}
	}
	sum := readWith(t, "fixtures/captures/any-bridge.pcap", Options{Summary: Summary{Enabled: true}})
	for _, st := range sum.Endpoints {
		if st.SYNRetx != 0 {
			t.Errorf("%s counted %d SYN retransmissions", st.Server, st.SYNRetx)
		}
	}
	if len(sum.Endpoints) == 0 {
		t.Error("the established attempt was not counted")
	}
}

func TestIsSegmentCopy(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	for _, c := range []struct {
		d    time.Duration
		zero bool
		want bool
	}{{20 * time.Microsecond, false, true}, {99 * time.Millisecond, false, true}, {time.Second, false, false}, {0, true, false}} {
		prev, next := t0, t0.Add(c.d)
		if c.zero {
			prev, next = time.Time{}, time.Time{}
		}
		if got := model.IsSegmentCopy(prev, next); got != c.want {
			t.Errorf("IsSegmentCopy(+%v, zero %v) = %v", c.d, c.zero, got)
		}
	}
}

func TestDistinctSegs(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	segs := []model.Seg{{Time: t0}, {Time: t0.Add(30 * time.Microsecond)}, {Time: t0.Add(time.Second)}, {Time: t0.Add(time.Second + time.Microsecond)}}
	if n := model.DistinctSegs(segs); n != 2 {
		t.Errorf("%d distinct, want 2", n)
	}
	if n := model.DistinctSegs([]model.Seg{{}, {}}); n != 2 {
		t.Errorf("without times: %d distinct, want 2", n)
	}
}

// A flood of identical ARP packets or ICMP errors keeps a sample per kind
// in summary mode, the rest counted on the last kept one; an owner change
// is always kept, and a claim that was not kept still answers a request.
func TestSummarizeEventFloods(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	x, a := netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("10.0.0.1")
	tr := NewTracker("f.pcap", Options{Summary: Summary{Enabled: true}})
	frame := 0
	arp := func(ms int, ev model.ARPEvent) {
		frame++
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: frame}, Time: at(ms), Proto: "arp", ARP: &ev})
	}
	grat := func(mac string) model.ARPEvent {
		return model.ARPEvent{Op: "reply", IP: x, Target: x, MAC: mac, Gratuitous: true}
	}
	for i := range 3000 {
		arp(10*i, grat("02:00:00:00:00:0a"))
	}
	arp(30000, grat("02:00:00:00:00:0b")) // a new owner
	for i := range 2000 {
		arp(30010+10*i, grat("02:00:00:00:00:0b"))
	}
	arp(60000, model.ARPEvent{Op: "request", IP: a, Target: x, MAC: "02:00:00:00:00:01"})
	arp(60005, grat("02:00:00:00:00:0b")) // not kept, but answers the request
	for i := range 5000 {
		frame++
		ev := model.ICMPEvent{Type: 3, Code: 3, What: "port-unreachable", From: x, To: a, QuotedProto: "udp",
			Quoted: model.Tuple{Src: netip.MustParseAddrPort("10.0.0.1:5353"), Dst: netip.MustParseAddrPort("10.0.0.9:53")}}
		tr.Add(&decode.Packet{Pos: model.Pos{Frame: frame}, Time: at(70000 + 10*i), Proto: "icmp", ICMP: &ev})
	}
	res := tr.Finish()
	if res.Info.Counts.ARP != 5003 || res.Info.Counts.ARPGratuitous != 5002 || res.Info.Counts.ICMPUnreach != 5000 {
		t.Fatalf("counts %+v", res.Info.Counts)
	}
	var owners []string
	total := 0
	for _, e := range res.ARP {
		total += 1 + e.Repeats
		if n := len(owners); e.Op == "reply" && (n == 0 || owners[n-1] != e.MAC) {
			owners = append(owners, e.MAC)
		}
		if e.Op == "request" && e.Unanswered {
			t.Errorf("the request at frame %d is answered by a reply that was counted, not kept", e.Pos.Frame)
		}
	}
	// 100 claims by the first owner, 100 by the second (its first one, the
	// change, among them), and the request.
	if len(res.ARP) != 2*FailedSample+1 || total != 5003 || fmt.Sprint(owners) != "[02:00:00:00:00:0a 02:00:00:00:00:0b]" {
		t.Errorf("%d ARP events kept standing for %d, owners %v", len(res.ARP), total, owners)
	}
	total = 0
	for _, e := range res.ICMP {
		total += 1 + e.Repeats
	}
	if len(res.ICMP) != FailedSample || total != 5000 {
		t.Errorf("%d ICMP events kept standing for %d", len(res.ICMP), total)
	}
}
