package text_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/capture/text"
	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

func readText(t *testing.T, rel string) ([]*track.Result, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	format, score := text.Sniff(b)
	if score < 50 {
		t.Fatalf("%s: sniffed as %q with score %d", rel, format, score)
	}
	res, err := text.Read(context.Background(), strings.NewReader(string(b)), rel, format, track.Options{})
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return res, format
}

func attemptKey(a model.Attempt) string {
	return fmt.Sprintf("%s>%s %s syn=%d synack=%d crst=%d srst=%d", a.Client, a.Server, a.Outcome, len(a.SYN), len(a.SYNACK), len(a.ClientRST), len(a.ServerRST))
}

// The text tcpdump and tshark print for a committed capture gives the same
// attempts and ICMP errors as the capture itself.
func TestTextMatchesCapture(t *testing.T) {
	for _, c := range []struct{ text, pcap, format string }{
		{"captures/text/handshakes.tcpdump.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-v.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-e-tttt.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-X.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-vvv-S.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-ttt.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-ttttt.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-t.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tcpdump-names.txt", "captures/handshakes.pcap", text.Tcpdump},
		{"captures/text/handshakes.tshark.txt", "captures/handshakes.pcap", text.Tshark},
		{"captures/text/handshakes.tshark-names.txt", "captures/handshakes.pcap", text.Tshark},
		{"captures/text/handshakes.tshark-td.txt", "captures/handshakes.pcap", text.Tshark},
		{"captures/text/handshakes.tshark-te.txt", "captures/handshakes.pcap", text.Tshark},
		{"captures/text/ephemeral-nodeport.tcpdump-A.txt", "incidents/ephemeral-nodeport/capture.pcap", text.Tcpdump},
		{"captures/text/ephemeral-nodeport.tcpdump-e.txt", "incidents/ephemeral-nodeport/capture.pcap", text.Tcpdump},
		{"captures/text/ephemeral-nodeport.tshark-ad.txt", "incidents/ephemeral-nodeport/capture.pcap", text.Tshark},
	} {
		t.Run(filepath.Base(c.text), func(t *testing.T) {
			res, format := readText(t, c.text)
			if format != c.format || len(res) != 1 {
				t.Fatalf("format %s, %d results; want %s, 1", format, len(res), c.format)
			}
			want, err := readFixture(t, c.pcap)
			if err != nil {
				t.Fatal(err)
			}
			got := res[0]
			if got.Info.Counts.Packets != want.Info.Counts.Packets {
				t.Errorf("%d packets, the capture has %d", got.Info.Counts.Packets, want.Info.Counts.Packets)
			}
			if len(got.Attempts) != len(want.Attempts) {
				t.Fatalf("%d attempts, the capture has %d", len(got.Attempts), len(want.Attempts))
			}
			for i := range got.Attempts {
				g, w := got.Attempts[i], want.Attempts[i]
				if attemptKey(g) != attemptKey(w) {
					t.Errorf("attempt %d: %s\n  capture: %s", i, attemptKey(g), attemptKey(w))
				}
				if g.Pos.Line == 0 {
					t.Errorf("attempt %d has no line", i)
				}
				if c.format == text.Tshark && g.SYN[0].Frame != w.SYN[0].Frame {
					t.Errorf("attempt %d: SYN frame %d, capture %d", i, g.SYN[0].Frame, w.SYN[0].Frame)
				}
			}
			// tshark's packet list does not show the quoted packet.
			quoted := func(ev model.ICMPEvent) string {
				if c.format == text.Tshark {
					return ev.What
				}
				return ev.What + " " + ev.Quoted.Dst.Addr().String()
			}
			var gw, ww []string
			for _, ev := range got.ICMP {
				gw = append(gw, quoted(ev))
			}
			for _, ev := range want.ICMP {
				ww = append(ww, quoted(ev))
			}
			if fmt.Sprint(gw) != fmt.Sprint(ww) {
				t.Errorf("ICMP %v, capture %v", gw, ww)
			}
		})
	}
}

// tcpdump -q prints no TCP flags: the packets count, and one warning at
// the first TCP line says why no attempt is told.
func TestTextQuiet(t *testing.T) {
	rel := "captures/text/handshakes.tcpdump-q.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	res, err := text.Read(context.Background(), strings.NewReader(string(b)), rel, text.Tcpdump, track.Options{})
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 1 || !strings.Contains(list[0].Error(), "tcpdump -q output shows no TCP flags") {
		t.Fatalf("err %v, want one warning at line 1", err)
	}
	if len(res) != 1 || res[0].Info.Counts.Packets != 70 || len(res[0].Attempts) != 0 || len(res[0].ICMP) != 3 {
		t.Errorf("results %+v", res)
	}
}

func TestTextARP(t *testing.T) {
	want, err := readFixture(t, "captures/arp.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	key := func(l []model.ARPEvent, macs bool) string {
		var out []string
		for _, e := range l {
			s := fmt.Sprintf("%s %s grat=%v", e.Op, e.IP, e.Gratuitous)
			if macs {
				s += " " + e.MAC
			}
			out = append(out, s)
		}
		return strings.Join(out, "\n")
	}
	for _, f := range []string{"captures/text/arp.tcpdump-e.txt", "captures/text/arp.tshark.txt"} {
		res, _ := readText(t, f)
		if got, w := key(res[0].ARP, false), key(want.ARP, false); got != w {
			t.Errorf("%s:\n%s\nwant\n%s", f, got, w)
		}
		if got, w := key(res[0].ARP, true), key(want.ARP, true); strings.HasSuffix(f, "tcpdump-e.txt") && got != w {
			t.Errorf("%s with MACs:\n%s\nwant\n%s", f, got, w)
		}
	}
}

// The seeds' pasted text: SYNs to 6443 from two nodes (000), the tshark
// packet list of the reset probes (002), ICMP errors shown with -v (003).
func TestTextSeeds(t *testing.T) {
	res, _ := readText(t, "seeds/000-apiserver-affinity/tcpdump-syn-6443.txt")
	var nodes []string
	for _, r := range res {
		nodes = append(nodes, fmt.Sprintf("%s:%d", r.Info.Node, len(r.Attempts)))
	}
	if fmt.Sprint(nodes) != "[node3:3 node2:3]" {
		t.Errorf("sections %v, want node3 and node2 with 3 attempts each", nodes)
	}
	for _, r := range res {
		if !strings.Contains(r.Info.Command, "tcp[tcpflags] & (tcp-syn) != 0") {
			t.Errorf("%s: command %q: the capture filter must be kept", r.Info.Node, r.Info.Command)
		}
		for _, a := range r.Attempts {
			// Only SYNs were captured: the handshake's ACK is not there.
			if a.Client.Addr().String() != "10.10.1.144" || a.Server.String() != "10.150.79.151:6443" || a.Outcome != model.OutcomeSynAckNoAck {
				t.Errorf("%s: attempt %s -> %s %s", r.Info.Node, a.Client, a.Server, a.Outcome)
			}
		}
	}

	res, _ = readText(t, "seeds/002-synack-reset/probe-failure.tshark.txt")
	a := res[0].Attempts
	if len(a) != 1 || a[0].Outcome != model.OutcomeSynAckClientRST || a[0].Client.Port() != 36704 || a[0].SYN[0].Frame != 649 {
		t.Fatalf("seed 002 attempts: %+v", a)
	}

	res, _ = readText(t, "seeds/003-lb-controller-conflict/tcpdump-icmp-unreachable.txt")
	ev := res[0].ICMP
	if len(ev) != 1 || ev[0].What != "host-unreachable" || ev[0].From.String() != "192.168.200.62" ||
		ev[0].Quoted.Dst.String() != "192.168.200.99:443" || ev[0].QuotedProto != "tcp" {
		t.Fatalf("seed 003 ICMP: %+v", ev)
	}
	if len(res[0].Attempts) != 0 {
		t.Errorf("the quoted SYN was counted as a packet: %+v", res[0].Attempts)
	}
	res, _ = readText(t, "seeds/003-lb-controller-conflict/tcpdump-icmp-redirect.txt")
	if ev := res[0].ICMP; len(ev) != 1 || ev[0].What != "redirect" || ev[0].Gateway.String() != "192.168.200.99" {
		t.Fatalf("seed 003 redirect: %+v", ev)
	}
}

func TestTextErrors(t *testing.T) {
	in := "12:00:00.000001 IP 10.0.0.1.1234 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		"12:00:00.000002 IP 10.0.0.1.nosuchservice > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		"12:00:00.000003 IP garbage\n" +
		"12:00:00.000004 IP node1.example.com.1234 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		"12:00:00.000005 IP node1.example.com.1235 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		"12:00:00.000006 IP 10.0.0.1.http > 10.0.0.2.https: Flags [S], seq 1, win 1, length 0\n"
	res, err := text.Read(context.Background(), strings.NewReader(in), "t.txt", text.Tcpdump, track.Options{})
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 3 || list[0].Pos.Line != 2 || list[1].Pos.Line != 3 || list[2].Pos.Line != 4 {
		t.Fatalf("errors %v, want lines 2, 3 and 4 (host names told once)", err)
	}
	if !strings.Contains(list[0].Error(), "port names") || !strings.Contains(list[2].Error(), "host names") {
		t.Errorf("errors %v", list)
	}
	if len(res) != 1 || len(res[0].Attempts) != 2 || res[0].Attempts[1].Client.String() != "10.0.0.1:80" || res[0].Attempts[1].Server.String() != "10.0.0.2:443" {
		t.Errorf("results %+v", res)
	}
}

func FuzzReadText(f *testing.F) {
	for _, rel := range []string{"captures/text/handshakes.tcpdump-v.txt", "captures/text/handshakes.tshark.txt", "seeds/002-synack-reset/probe-failure.tshark.txt",
		"seeds/003-lb-controller-conflict/tcpdump-icmp-unreachable.txt", "captures/text/ephemeral-nodeport.tcpdump-e.txt",
		"captures/text/loopback-sll.tcpdump-e.txt", "captures/text/handshakes.tcpdump-names.txt", "captures/text/handshakes.tshark-names.txt",
		"real/tcpdump-text/index36506000102_tcpdump-nn-e-i-any_macs-replaced-by-words_before-br_netfilter.txt"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, format := range []string{text.Tcpdump, text.Tshark} {
			res, err := text.Read(context.Background(), strings.NewReader(in), "f.txt", format, track.Options{})
			var list model.ErrorList
			if err != nil && !errors.As(err, &list) {
				t.Fatalf("error %v is not positioned", err)
			}
			for _, r := range res {
				if len(r.Attempts) != r.Info.Counts.TCPStreams {
					t.Fatalf("%d attempts, %d streams", len(r.Attempts), r.Info.Counts.TCPStreams)
				}
			}
		}
	})
}

// tcpdump -e on a Linux SLL (v1) capture of -i any: the direction and the
// source MAC alone, no interface name. The text is real output.
func TestTextSLLv1(t *testing.T) {
	res, format := readText(t, "captures/text/loopback-sll.tcpdump-e.txt")
	if format != text.Tcpdump || len(res) != 1 {
		t.Fatalf("format %s, %d results", format, len(res))
	}
	var got []string
	for _, a := range res[0].Attempts {
		got = append(got, fmt.Sprintf("%s %s syn=%d", a.Server, a.Outcome, a.SYN[0].Line))
	}
	if want := "[127.0.0.1:8099 established syn=1 127.0.0.1:8098 refused syn=7]"; fmt.Sprint(got) != want {
		t.Errorf("attempts %v, want %s", got, want)
	}
	if res[0].Info.Counts.Packets != 8 {
		t.Errorf("%d packets, want 8", res[0].Info.Counts.Packets)
	}
}

// -ttt (since the previous packet) and -ttttt (since the first) give the
// attempts the capture's own spacing.
func TestTextRelativeTimes(t *testing.T) {
	want, err := readFixture(t, "captures/handshakes.pcap")
	if err != nil {
		t.Fatal(err)
	}
	offsets := func(as []model.Attempt) string {
		var out []string
		for _, a := range as {
			out = append(out, a.Start.Sub(as[0].Start).String())
		}
		return strings.Join(out, " ")
	}
	for _, rel := range []string{"captures/text/handshakes.tcpdump-ttt.txt", "captures/text/handshakes.tcpdump-ttttt.txt"} {
		res, _ := readText(t, rel)
		if got, w := offsets(res[0].Attempts), offsets(want.Attempts); got != w {
			t.Errorf("%s: attempts start at %s, the capture's at %s", rel, got, w)
		}
	}
	// tshark -t d prints deltas rounded to the microsecond: their sums
	// stay within a few microseconds of the capture. -t e gives the
	// capture's own times.
	within := func(got, w []model.Attempt, tol time.Duration) bool {
		for i := range got {
			d := got[i].Start.Sub(got[0].Start) - w[i].Start.Sub(w[0].Start)
			if d < -tol || d > tol {
				return false
			}
		}
		return len(got) == len(w)
	}
	if res, _ := readText(t, "captures/text/handshakes.tshark-td.txt"); !within(res[0].Attempts, want.Attempts, 100*time.Microsecond) {
		t.Errorf("tshark -t d: attempts start at %s, the capture's at %s", offsets(res[0].Attempts), offsets(want.Attempts))
	}
	if res, _ := readText(t, "captures/text/handshakes.tshark-te.txt"); !res[0].Attempts[0].Start.Equal(want.Attempts[0].Start) ||
		!within(res[0].Attempts, want.Attempts, time.Microsecond) {
		t.Errorf("tshark -t e: first attempt at %v, the capture's at %v", res[0].Attempts[0].Start, want.Attempts[0].Start)
	}
	// A pasted command line says -ttt: deltas from the first line on, even
	// while they grow.
	in := "# tcpdump -nn -ttt -i eth0\n" +
		" 00:00:00.000000 IP 10.0.0.1.1001 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		" 00:00:00.500000 IP 10.0.0.1.1002 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n" +
		" 00:00:01.000000 IP 10.0.0.1.1003 > 10.0.0.2.80: Flags [S], seq 1, win 1, length 0\n"
	res, err := text.Read(context.Background(), strings.NewReader(in), "t.txt", text.Tcpdump, track.Options{})
	if err != nil || len(res) != 1 {
		t.Fatalf("%v %d", err, len(res))
	}
	if got := offsets(res[0].Attempts); got != "0s 500ms 1.5s" {
		t.Errorf("with -ttt: %s, want 0s 500ms 1.5s", got)
	}
	res, _ = text.Read(context.Background(), strings.NewReader(strings.Replace(in, "-ttt", "-ttttt", 1)), "t.txt", text.Tcpdump, track.Options{})
	if got := offsets(res[0].Attempts); got != "0s 500ms 1s" {
		t.Errorf("with -ttttt: %s, want 0s 500ms 1s", got)
	}
}

// Pasted ARP text gives the same unanswered requests as the capture: the
// replies' targets, which tcpdump does not print, are the last askers, and
// times of day count.
func TestTextUnansweredARP(t *testing.T) {
	res, _ := readText(t, "captures/text/vip-unannounced.tcpdump.txt")
	want, err := readFixture(t, "incidents/vip-unannounced/capture.pcap")
	if err != nil {
		t.Fatal(err)
	}
	key := func(l []model.ARPEvent) string {
		var out []string
		for _, e := range l {
			out = append(out, fmt.Sprintf("%s %s>%s unanswered=%v", e.Op, e.IP, e.Target, e.Unanswered))
		}
		return strings.Join(out, "\n")
	}
	if got, w := key(res[0].ARP), key(want.ARP); got != w {
		t.Errorf("text:\n%s\ncapture:\n%s", got, w)
	}
}

// Pasted text is summarized as a capture is: a large tcpdump -r dump
// keeps memory to its live connections too.
func TestTextSummarize(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/text/handshakes.tcpdump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(o track.Options) *track.Result {
		res, err := text.Read(context.Background(), strings.NewReader(string(b)), "h.txt", text.Tcpdump, o)
		if err != nil || len(res) != 1 {
			t.Fatalf("%v %d", err, len(res))
		}
		return res[0]
	}
	full, sum := read(track.Options{}), read(track.Options{Summary: track.Summary{Enabled: true}})
	if sum.Info.Counts != full.Info.Counts {
		t.Errorf("counts differ:\n%+v\n%+v", sum.Info.Counts, full.Info.Counts)
	}
	folded := 0
	for _, e := range sum.Endpoints {
		folded += e.Attempts
	}
	if folded == 0 || len(sum.Attempts)+folded != len(full.Attempts) {
		t.Errorf("%d kept + %d counted, want %d attempts in all, some counted", len(sum.Attempts), folded, len(full.Attempts))
	}
}

// readFixture reads a committed capture file, as the text printed for it
// is compared with.
func readFixture(t testing.TB, rel string) (*track.Result, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	return capture.Read(context.Background(), bytes.NewReader(b), rel, capture.Options{Node: "node1"})
}

// A read whose context ends keeps what it read before: the Result of the
// lines before the one it stopped at, and an error there that says so.
func TestTextCanceled(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/text/handshakes.tcpdump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var long bytes.Buffer
	for long.Len() < 40*len(b) {
		long.Write(b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := text.Read(ctx, &long, "long.txt", text.Tcpdump, track.Options{})
	if !errors.Is(err, context.Canceled) || len(res) != 1 || len(res[0].Attempts) == 0 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 1024 ||
		!strings.Contains(list[0].Error(), "not read from here on, what came before kept") {
		t.Errorf("error %v: want one at line 1024", err)
	}
	var last int
	for _, a := range res[0].Attempts {
		for _, s := range a.SYN {
			last = max(last, s.Line)
		}
	}
	if last == 0 || last >= 1024 {
		t.Errorf("last SYN at line %d, want one before line 1024", last)
	}
}

// A read whose reader stops in the middle of a line, its context done
// (as the CLI's readers do on Ctrl-C), reads the lines before it and not
// the part of that line it got: at every place of the file, it gives
// what the lines before alone give, and names that line as the first not
// read; a -v packet whose addresses line was not read is no error.
func TestTextCanceledReader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/captures/text/handshakes.tcpdump-v.txt"))
	if err != nil {
		t.Fatal(err)
	}
	summary := func(res []*track.Result) string {
		var out []string
		for _, r := range res {
			for _, a := range r.Attempts {
				out = append(out, attemptKey(a)+" "+a.History)
			}
		}
		return strings.Join(out, "\n")
	}
	for at := 1; at < len(b); at += 23 {
		line := 1 + bytes.Count(b[:at], []byte("\n"))
		whole := bytes.LastIndexByte(b[:at], '\n') + 1 // the lines before the cut one
		want, werr := text.Read(context.Background(), bytes.NewReader(b[:whole]), "cut.txt", text.Tcpdump, track.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		got, err := text.Read(ctx, &testutil.CancelingReader{R: bytes.NewReader(b), Left: at, Ctx: ctx, Cancel: cancel}, "cut.txt", text.Tcpdump, track.Options{})
		cancel()
		if g, w := summary(got), summary(want); g != w {
			t.Fatalf("cut at byte %d (line %d):\n%s\nwant\n%s", at, line, g, w)
		}
		// The errors are those of the lines before alone, and the stop
		// at the cut line last: no line that was only cut is malformed.
		var list, wantList model.ErrorList
		errors.As(err, &list)
		errors.As(werr, &wantList)
		wantList = slices.DeleteFunc(wantList, func(e *model.Error) bool {
			return strings.Contains(e.Error(), "without the addresses line") // the lines before end there
		})
		if n := len(list); !errors.Is(err, context.Canceled) || n != len(wantList)+1 || list[n-1].Pos.Line != line ||
			!errors.Is(list[n-1], model.ErrStopped) {
			t.Fatalf("cut at byte %d: error %v, want %v and the stop at line %d", at, err, wantList, line)
		}
	}
}

// A tcpdump -v UDP line that names hosts (VXLAN between nodes printed
// without -n, as projectcalico/calico#3145 pasted it) is told as a TCP
// line's names are: once, at the packet's line.
func TestTextUDPHostNames(t *testing.T) {
	in := "11:51:31.656705 IP (tos 0x0, ttl 64, id 59791, offset 0, flags [none], proto UDP (17), length 102)\n" +
		"    nodeC.local.26898 > nodeA.local.4789: [bad udp cksum 0xffff -> 0x76dc!] VXLAN, flags [I] (0x08), vni 4096\n" +
		"11:51:32.657297 IP (tos 0x0, ttl 64, id 60020, offset 0, flags [none], proto UDP (17), length 102)\n" +
		"    nodeC.local.26898 > nodeA.local.4789: [bad udp cksum 0xffff -> 0x76dc!] VXLAN, flags [I] (0x08), vni 4096\n"
	_, err := text.Read(context.Background(), strings.NewReader(in), "t.txt", text.Tcpdump, track.Options{})
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 1 || !strings.Contains(list[0].Error(), "host names") {
		t.Fatalf("errors %v, want one at line 1, the packet's (host names)", err)
	}
}
