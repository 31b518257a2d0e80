package netfilter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// conntrackEventFile reads a conntrack -E file and formats each event as
// "EVENT time|- " followed by conntrackLines' line.
func conntrackEventFile(t *testing.T, rel string) []string {
	t.Helper()
	out := parsetest.ReadFile(t, rel, ConntrackEvents)
	lines := conntrackLines(out)
	for i, c := range out {
		ts := "-"
		if !c.Time.IsZero() {
			ts = c.Time.Format(time.RFC3339Nano)
		}
		icmp := ""
		if c.ICMP != nil {
			icmp = fmt.Sprintf(" icmp=%d/%d/%d", c.ICMP.Type, c.ICMP.Code, c.ICMP.ID)
		}
		lines[i] = c.Event + " " + ts + " " + lines[i] + icmp
	}
	return lines
}

// conntrack -E as jc issue #646 shows it: tags right-aligned to nine
// characters, DESTROY events without a timeout.
func TestConntrackEventsAligned(t *testing.T) {
	got := conntrackEventFile(t, "fixtures/real/conntrack/jc-issue646_conntrack-E_aligned-event-tags_udp-dns.txt")
	if len(got) != 10 {
		t.Fatalf("%d events, want 10:\n%s", len(got), strings.Join(got, "\n"))
	}
	want := map[int]string{
		0: "DESTROY - 1  ipv4 udp 0 - 192.168.209.128:42007>192.0.2.8:53 192.0.2.8:53>192.168.209.128:42007 - mark=0 zone=0 use=0 0/0/0/0",
		5: "DESTROY - 6  ipv4 udp 0 - 192.168.209.128:5353>224.0.0.251:5353 224.0.0.251:5353>192.168.209.128:5353 UNREPLIED mark=0 zone=0 use=0 0/0/0/0",
		9: "NEW - 10  ipv4 udp 30 - 127.0.0.1:26218>127.0.0.53:53 127.0.0.53:53>127.0.0.1:26218 UNREPLIED mark=0 zone=0 use=0 0/0/0/0",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("event %d = %q, want %q", i, got[i], w)
		}
	}
	destroy := 0
	for _, g := range got {
		if strings.HasPrefix(g, "DESTROY ") {
			destroy++
		}
	}
	if destroy != 8 {
		t.Errorf("%d DESTROY events, want 8", destroy)
	}
}

// conntrack -E -o timestamp of conntrack-tools 1.4.7: a DNATed TCP
// connection through every state, ICMP, UDP, an SCTP entry inserted with
// conntrack -I, accounting on DESTROY; the summary line closes it.
func TestConntrackEventsTimestamp(t *testing.T) {
	got := conntrackEventFile(t, "fixtures/real/local/conntrack/local_conntrack-E-o-timestamp_tcp-udp-icmp-dnat.txt")
	if len(got) != 25 {
		t.Fatalf("%d events, want 25", len(got))
	}
	parsetest.CheckLines(t, "first events", got[:8], []string{
		"NEW 2026-11-24T16:48:37.206647Z 1  ipv4 icmp 30 - 10.77.1.2:0>10.77.2.2:0 10.77.2.2:0>10.77.1.2:0 UNREPLIED mark=0 zone=0 use=0 0/0/0/0 icmp=8/0/11558",
		"UPDATE 2026-11-24T16:48:37.206695Z 2  ipv4 icmp 30 - 10.77.1.2:0>10.77.2.2:0 10.77.2.2:0>10.77.1.2:0 - mark=0 zone=0 use=0 0/0/0/0 icmp=8/0/11558",
		"NEW 2026-11-24T16:48:37.731912Z 3  ipv4 tcp 120 SYN_SENT 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 UNREPLIED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE 2026-11-24T16:48:37.731952Z 4  ipv4 tcp 60 SYN_RECV 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 - mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE 2026-11-24T16:48:37.731967Z 5  ipv4 tcp 432000 ESTABLISHED 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE 2026-11-24T16:48:37.732283Z 6  ipv4 tcp 120 FIN_WAIT 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE 2026-11-24T16:48:37.732294Z 7  ipv4 tcp 30 LAST_ACK 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE 2026-11-24T16:48:37.732301Z 8  ipv4 tcp 120 TIME_WAIT 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
	})
	var destroys, sctp []string
	for _, g := range got {
		if strings.HasPrefix(g, "DESTROY ") {
			destroys = append(destroys, g)
		}
		if strings.Contains(g, " sctp ") {
			sctp = append(sctp, g)
		}
	}
	if len(destroys) != 2 || !strings.Contains(destroys[0], " icmp ") || !strings.Contains(destroys[0], " 2/168/2/168") || !strings.Contains(destroys[0], "USERSPACE") ||
		!strings.Contains(destroys[1], " udp ") || !strings.Contains(destroys[1], " 1/29/1/29") {
		t.Errorf("DESTROY events:\n%s", strings.Join(destroys, "\n"))
	}
	if len(sctp) != 1 || !strings.Contains(sctp[0], "sctp 210 ESTABLISHED 10.77.1.2:34567>10.77.2.2:36412") || !strings.Contains(sctp[0], "ASSURED,USERSPACE") {
		t.Errorf("sctp events: %q", sctp)
	}
}

// The same traffic seen by a conntrack -E without -o timestamp: the same
// events, no times.
func TestConntrackEventsPlain(t *testing.T) {
	plain := conntrackEventFile(t, "fixtures/real/local/conntrack/local_conntrack-E_plain_same-traffic.txt")
	stamped := conntrackEventFile(t, "fixtures/real/local/conntrack/local_conntrack-E-o-timestamp_tcp-udp-icmp-dnat.txt")
	if len(plain) != len(stamped) {
		t.Fatalf("%d events without timestamps, %d with", len(plain), len(stamped))
	}
	count := func(lines []string) map[string]int {
		m := map[string]int{}
		for _, l := range lines {
			f := strings.Fields(l)
			if f[1] != "-" && &lines[0] == &plain[0] {
				t.Errorf("plain event with a time: %s", l)
			}
			m[f[0]+" "+strings.Join(f[4:], " ")]++ // without time and line
		}
		return m
	}
	p, s := count(plain), count(stamped)
	for k, n := range s {
		if p[k] != n {
			t.Errorf("%q: %d with timestamps, %d without", k, n, p[k])
		}
	}
}

// journalctl -o cat of a unit that runs conntrack -E: the message alone,
// its leading spaces (the right-aligned "    [NEW]") kept.
func TestConntrackEventsJournalctlCat(t *testing.T) {
	got := conntrackEventFile(t, "fixtures/real/local/journald/local_journalctl-o-cat.txt")
	want := []string{
		"NEW - 1  ipv4 icmp 30 - 10.77.1.2:0>10.77.2.2:0 10.77.2.2:0>10.77.1.2:0 UNREPLIED mark=0 zone=0 use=0 0/0/0/0 icmp=8/0/11558",
		"UPDATE - 2  ipv4 icmp 30 - 10.77.1.2:0>10.77.2.2:0 10.77.2.2:0>10.77.1.2:0 - mark=0 zone=0 use=0 0/0/0/0 icmp=8/0/11558",
		"NEW - 3  ipv4 tcp 120 SYN_SENT 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 UNREPLIED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE - 4  ipv4 tcp 60 SYN_RECV 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 - mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE - 5  ipv4 tcp 432000 ESTABLISHED 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE - 6  ipv4 tcp 120 FIN_WAIT 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
		"UPDATE - 7  ipv4 tcp 30 LAST_ACK 10.77.1.2:49364>10.96.77.10:80 10.77.2.2:8080>10.77.1.2:49364 ASSURED mark=0 zone=0 use=0 0/0/0/0 DNAT",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An event whose addresses the author replaced by words is a positioned
// error; the format still claims the file.
func TestConntrackEventsMaskedAddresses(t *testing.T) {
	rel := "fixtures/real/conntrack/google-nftables-issue138_conntrack-E_one-line-author-masked-ips.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ConntrackEvents(strings.NewReader(string(b)), "e.txt")
	if len(out) != 0 {
		t.Errorf("read %d events", len(out))
	}
	if at := parsetest.SyntaxErrorsAt(t, err); at != "e.txt:1" {
		t.Errorf("errors at %q, want e.txt:1", at)
	}
	if sc := ConntrackEventsFormat.Sniff(rel, b); sc < 80 {
		t.Errorf("sniff = %d", sc)
	}
}

// A bad line among good ones is reported at its line; the rest is read.
func TestConntrackEventsBadLine(t *testing.T) {
	in := "    [NEW] udp      17 30 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=53 [UNREPLIED] src=10.0.0.2 dst=10.0.0.1 sport=53 dport=1\n" +
		"[99999999999999999.1]\t[NEW] udp 17 30 src=10.0.0.1 dst=10.0.0.2 sport=2 dport=53 src=10.0.0.2 dst=10.0.0.1 sport=53 dport=2\n" +
		"[DESTROY] udp      17 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=53 src=10.0.0.2 dst=10.0.0.1 sport=53 dport=1\n"
	out, err := ConntrackEvents(strings.NewReader(in), "e.txt")
	if len(out) != 2 || out[0].Event != "NEW" || out[1].Event != "DESTROY" || out[1].Pos.Line != 3 {
		t.Errorf("events %+v", out)
	}
	if at := parsetest.SyntaxErrorsAt(t, err); at != "e.txt:2" {
		t.Errorf("errors at %q", at)
	}
}

func FuzzConntrackEvents(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{
		"fixtures/real/conntrack/jc-issue646_conntrack-E_aligned-event-tags_udp-dns.txt",
		"fixtures/real/local/conntrack/local_conntrack-E-o-timestamp_tcp-udp-icmp-dnat.txt",
	})
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ConntrackEvents(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, c := range out {
			if c.Pos.Line == 0 || c.Event == "" {
				t.Fatalf("event %+v", c)
			}
		}
	})
}
