package rules

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// An ICMP error that quotes no packet is still sent to the host whose
// packet it answers: that host is the sender, and with no destination to
// ask a route for, the command that decides is a capture on the sender. A
// net-unreachable is a missing route, not the host-unreachable story of
// ARP and VIPs.
func TestICMPUnquoted(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "t.pcap", Kind: model.KindCapture}}}
	s.ICMP = append(s.ICMP, model.ICMPEvent{Pos: model.Pos{File: "t.pcap", Frame: 1}, From: netip.MustParseAddr("10.0.0.1"),
		To: netip.MustParseAddr("10.0.0.2"), Type: 3, What: "net-unreachable"})
	f := run1(t, ICMPUnreachable, s)
	if len(f) != 1 {
		t.Fatalf("%d findings: %+v", len(f), f)
	}
	if got := fmt.Sprint(f[0].Facts["senders"]); got != "[10.0.0.2]" {
		t.Errorf("senders %s, want [10.0.0.2]", got)
	}
	if want := "# on the senders: which packets the messages answer\ntcpdump -ni any host 10.0.0.1"; f[0].Decide != want {
		t.Errorf("decide %q, want %q", f[0].Decide, want)
	}
	if want := "10.0.0.1 has no route for the packets it answers; the messages quote none of them, so where they were going is not known."; f[0].Cause != want {
		t.Errorf("cause %q, want %q", f[0].Cause, want)
	}
}

// The same on real captures of the shared corpus (Zeek's ICMP tests): an
// ICMPv6 redirect without a Redirected Header option names the destination
// it redirects in its own body, and is sent to the redirected host; an
// unreachable quoting no header is sent to its sender.
func TestICMPUnquotedCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "pcap", "corpus", "zeek")
	for _, c := range []struct {
		file, title, senders, decide string
	}{
		{"icmp__icmp6-redirect.pcap", "fe80::dead redirects traffic for fe80::babe to fe80::cafe", "[fe80::beef]",
			"# on the senders\nip route get fe80::babe"},
		{"icmp__icmp-destunreach-no-context.pcap", "10.0.0.1 answers traffic to an address the message does not quote with ICMP net-unreachable",
			"[10.0.0.2]", "# on the senders: which packets the messages answer\ntcpdump -ni any host 10.0.0.1"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := capture.Read(context.Background(), f, path, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := &model.Snapshot{Inputs: []model.Input{{Path: path, Kind: model.KindCapture}}, ICMP: res.ICMP, Attempts: res.Attempts}
			fs := run1(t, ICMPUnreachable, s)
			if len(fs) != 1 {
				t.Fatalf("%d findings: %+v", len(fs), fs)
			}
			if fs[0].Title != c.title || fmt.Sprint(fs[0].Facts["senders"]) != c.senders || fs[0].Decide != c.decide {
				t.Errorf("title %q, senders %v, decide %q; want %q, %s, %q", fs[0].Title, fs[0].Facts["senders"], fs[0].Decide, c.title, c.senders, c.decide)
			}
		})
	}
}
