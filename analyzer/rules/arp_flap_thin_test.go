package rules

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

func TestAdjacentBurnedInMACs(t *testing.T) {
	for _, c := range []struct {
		macs []string
		want bool
	}{
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:87:eb"}, true},                      // two ports of one card
		{[]string{"00:23:8b:bd:87:01", "00:23:8b:bd:87:02", "00:23:8b:bd:87:03"}, true}, // three in sequence
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:87:ee"}, false},                     // a gap
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:88:ed"}, false},                     // another fifth octet
		{[]string{"02:42:ac:11:00:02", "02:42:ac:11:00:03"}, false},                     // locally administered (Docker)
		{[]string{"01:00:5e:00:00:01", "01:00:5e:00:00:02"}, false},                     // multicast
		{[]string{"00:50:56:8a:d3:04", "00:50:56:8a:97:08"}, false},                     // two VMs
		{[]string{"00:23:8b:bd:87:ec"}, false},                                          // one MAC
		{[]string{"00:23:8b:bd:87:ec", "not-a-mac"}, false},
	} {
		if got := adjacentBurnedInMACs(c.macs); got != c.want {
			t.Errorf("adjacentBurnedInMACs(%v) = %v, want %v", c.macs, got, c.want)
		}
	}
}

// speakerLine is a MetalLB speaker's line saying it answered ARP for ip
// with mac, at second sec, in file.
func speakerLine(file string, line, sec int, ip, mac string) model.LogEvent {
	return model.LogEvent{Message: "got ARP request for service IP, sending response",
		Time:   time.Date(2020, 5, 8, 17, 4, sec, 0, time.UTC),
		Fields: map[string]string{"ip": ip, "responseMAC": mac, "interface": "eth0"},
		Pos:    model.Pos{File: file, Line: line}}
}

func TestARPFlapSpeakers(t *testing.T) {
	const ip, a, b = "10.0.9.171", "00:50:56:8a:4e:19", "00:50:56:8a:b2:6c"
	addr := netip.MustParseAddr(ip)
	// An arping run answered from both MACs, and the speakers' lines.
	snap := func(logs ...model.LogEvent) *model.Snapshot {
		return &model.Snapshot{Inputs: []model.Input{{Path: "arping.txt", Kind: model.KindClient},
			{Path: "speaker-1.log", Kind: model.KindLogs}, {Path: "speaker-2.log", Kind: model.KindLogs}},
			Client: []model.ClientResult{
				{Tool: "arping", Target: ip, Addr: netip.AddrPortFrom(addr, 0), MAC: a, Outcome: model.ClientConnected, Pos: model.Pos{File: "arping.txt", Line: 3}},
				{Tool: "arping", Target: ip, Addr: netip.AddrPortFrom(addr, 0), MAC: b, Outcome: model.ClientConnected, Pos: model.Pos{File: "arping.txt", Line: 4}}},
			Logs: logs}
	}
	// Two speakers whose answers interleave: both announce at once,
	// shown by arping and by their logs.
	f := run1(t, ARPFlap, snap(speakerLine("speaker-1.log", 1, 1, ip, a), speakerLine("speaker-2.log", 1, 2, ip, b),
		speakerLine("speaker-1.log", 2, 3, ip, a)))
	if len(f) != 1 || f[0].Certainty != analyzer.Proven || f[0].Severity != analyzer.Error || !strings.Contains(f[0].Cause, "MetalLB speakers") {
		t.Errorf("interleaved: %+v", f)
	}
	// One after the other: a finished failover is not ruled out.
	f = run1(t, ARPFlap, snap(speakerLine("speaker-2.log", 1, 1, ip, b), speakerLine("speaker-1.log", 1, 5, ip, a)))
	if len(f) != 1 || f[0].Certainty != analyzer.Likely || len(f[0].Alternatives) != 1 || f[0].Severity != analyzer.Warning {
		t.Errorf("one after the other: %+v", f)
	}
	// One speaker answering with two MACs is one host's two NICs, not two
	// speakers: the cause stays open.
	f = run1(t, ARPFlap, snap(speakerLine("speaker-1.log", 1, 1, ip, a), speakerLine("speaker-1.log", 2, 2, ip, b)))
	if len(f) != 1 || f[0].Certainty != analyzer.Unknown || strings.Contains(f[0].Cause, "MetalLB speakers") {
		t.Errorf("one speaker, two MACs: %+v", f)
	}
	// No speaker lines: the cause stays open.
	if f = run1(t, ARPFlap, snap()); len(f) != 1 || f[0].Certainty != analyzer.Unknown {
		t.Errorf("arping alone: %+v", f)
	}
}
