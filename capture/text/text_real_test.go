package text_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/capture/text"
	"github.com/netmortem/netmortem/capture/track"
)

// tcpdump -nn -e -i any whose author replaced the MAC addresses by words
// (DEBUG_INTERFACE, BRIDGE_INTERFACE ...): the IP part is read. Before
// br_netfilter was loaded, the SYN to the ClusterIP went unanswered there
// and the pod's un-NATed SYN/ACK was reset by the client; after, the
// handshake completes.
func TestTextMACsReplacedByWords(t *testing.T) {
	for _, tt := range []struct {
		file    string
		packets int
		want    string
	}{
		{"index36506000102_tcpdump-nn-e-i-any_macs-replaced-by-words_before-br_netfilter.txt", 7,
			"10.32.0.143:80 unanswered syn=4 synack=0; 10.210.2.51:80 synack_client_rst syn=6 synack=8"},
		{"index36506000102_tcpdump-nn-e-i-any_macs-replaced-by-words_after-br_netfilter.txt", 8,
			"10.32.0.143:80 established syn=4 synack=9"},
	} {
		res, format := readText(t, "real/tcpdump-text/"+tt.file)
		if format != text.Tcpdump || len(res) != 1 {
			t.Fatalf("%s: format %s, %d results", tt.file, format, len(res))
		}
		r := res[0]
		var got []string
		for _, a := range r.Attempts {
			synack := 0
			if len(a.SYNACK) > 0 {
				synack = a.SYNACK[0].Line
			}
			got = append(got, fmt.Sprintf("%s %s syn=%d synack=%d", a.Server, a.Outcome, a.SYN[0].Line, synack))
		}
		if r.Info.Counts.Packets != tt.packets || !strings.HasPrefix(strings.Join(got, "; "), tt.want) {
			t.Errorf("%s: %d packets, attempts %q, want %q", tt.file, r.Info.Counts.Packets, got, tt.want)
		}
		if r.Info.Node != "worker-2" {
			t.Errorf("%s: node %q", tt.file, r.Info.Node)
		}
		for _, e := range r.ARP {
			if strings.Contains(e.MAC, "INTERFACE") {
				t.Errorf("%s: a word kept as a MAC: %+v", tt.file, e)
			}
		}
	}
}

// tcpdump text as published and as tcpdump 4.99.3 prints it: LINUX_SLL2
// lines behind busybox and netshoot prompts (banner and warning lines
// skipped), and ICMP need-to-frag with -e and with -v.
func TestTextRealExamples(t *testing.T) {
	for _, tt := range []struct {
		file             string
		packets, streams int
		first            string
	}{
		{"real/tcpdump-text/index35372051704_busybox-prompt_sll2-any_lo-handshake.txt", 3, 1, "127.0.0.1:80 established syn=6"},
		{"real/tcpdump-text/index46895558247_netshoot-powerline-prompt_sll2-any_data-link-type-line.txt", 3, 1, "127.0.0.1:80 established"},
		{"real/tcpdump-text/index12860955295_netshoot-prompt-indented_sll2-any_warning-lines.txt", 1, 1, "127.0.0.1:80 unanswered"},
	} {
		res, _ := readText(t, tt.file)
		if len(res) != 1 || res[0].Info.Counts.Packets != tt.packets || len(res[0].Attempts) != tt.streams {
			t.Errorf("%s: %d results", tt.file, len(res))
			continue
		}
		a := res[0].Attempts[0]
		if got := fmt.Sprintf("%s %s syn=%d", a.Server, a.Outcome, a.SYN[0].Line); !strings.HasPrefix(got, tt.first) {
			t.Errorf("%s: first attempt %q, want %q", tt.file, got, tt.first)
		}
	}
	// -e does not show what the error quotes beyond its addresses; -v
	// shows the quoted packet on a line of its own.
	for file, want := range map[string]string{
		"real/local/tcpdump-text/local_tcpdump-nn-e_icmp-frag-needed_mtu1280.txt": "10.77.1.1>10.77.1.2 frag-needed quoted 10.77.1.2>10.77.2.2 ;10.77.1.1>10.77.1.2 frag-needed quoted 10.77.1.2>10.77.2.2 ",
		"real/local/tcpdump-text/local_tcpdump-nn-v_icmp-frag-needed.txt":         "10.77.1.1>10.77.1.2 frag-needed quoted 10.77.1.2>10.77.2.2 icmp",
	} {
		res, _ := readText(t, file)
		if len(res) != 1 {
			t.Fatalf("%s: %d results", file, len(res))
		}
		var icmp []string
		for _, e := range res[0].ICMP {
			icmp = append(icmp, fmt.Sprintf("%s>%s %s quoted %s>%s %s", e.From, e.To, e.What, e.Quoted.Src.Addr(), e.Quoted.Dst.Addr(), e.QuotedProto))
		}
		if strings.Join(icmp, ";") != want {
			t.Errorf("%s: ICMP %q", file, icmp)
		}
	}
}

// tcpdump -e -v on the receiving node of calico#4865: a VXLAN packet whose
// outer UDP checksum tcpdump found wrong ("[bad udp cksum 0x9c31 ->
// 0x2f5a!]") is a checksum error; one whose checksum is right is not.
func TestTextBadUDPChecksum(t *testing.T) {
	res, _ := readText(t, "field/vxlan-checksum-offload--calico-issue-4865/tcpdump.txt")
	if len(res) != 1 || len(res[0].BadChecksums) != 1 {
		t.Fatalf("results %+v", res)
	}
	if b := res[0].BadChecksums[0]; b.Proto != "udp" || b.Src.String() != "10.8.21.37:6281" ||
		b.Dst.String() != "10.8.21.25:4789" || b.Pos.Line != 1 {
		t.Errorf("bad checksum %+v", b)
	}
	ok := "12:00:00.000001 IP (tos 0x0, ttl 64, id 1, offset 0, flags [none], proto UDP (17), length 129)\n" +
		"    10.8.21.37.6281 > 10.8.21.25.4789: [udp sum ok] VXLAN, flags [I] (0x08), vni 4096\n"
	got, err := text.Read(context.Background(), strings.NewReader(ok), "ok.txt", text.Tcpdump, track.Options{})
	if err != nil || len(got) != 1 || len(got[0].BadChecksums) != 0 {
		t.Errorf("checksum ok: %+v, %v", got, err)
	}
}

// cilium#27758's one line of tcpdump, cut by its paste before its times
// and addresses: an ICMP fragmentation-needed for 10.68.5.41 with its
// MTU, sent by and to hosts the line does not name.
func TestTextCutICMPLine(t *testing.T) {
	res, format := readText(t, "field/mtu-blackhole--cilium-27758/tcpdump.txt")
	if format != text.Tcpdump || len(res) != 1 || len(res[0].ICMP) != 1 {
		t.Fatalf("format %s, results %+v", format, res)
	}
	e := res[0].ICMP[0]
	if e.What != "frag-needed" || e.Type != 3 || e.Code != 4 || e.MTU != 1320 || e.From.IsValid() ||
		e.Quoted.Dst.Addr().String() != "10.68.5.41" || e.Pos.Line != 1 {
		t.Errorf("event %+v", e)
	}
	// A line that is not an ICMP error's tail is not one.
	for _, in := range []string{"ICMP 10.68.5.41 echo request, id 1, seq 1, length 64\n", "ICMP statistics: 4 unreachable\n"} {
		got, err := text.Read(context.Background(), strings.NewReader(in), "x.txt", text.Tcpdump, track.Options{})
		if err != nil || len(got) > 0 && len(got[0].ICMP) > 0 {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
}

// calico#2334's tcpdump without -v (from inside a docker-in-docker Pod,
// its SYN line wrapped as pasted): the fragmentation-needed error prints
// its quoted destination alone, and is joined to the connection between
// its two hosts, whose attempt summary mode keeps; an error of another
// kind is not joined by hosts.
func TestTextFragNeededJoinsHosts(t *testing.T) {
	const paste = `tcpdump -nli eth0 host 151.101.128.70
tcpdump: verbose output suppressed, use -v or -vv for full protocol decode
listening on eth0, link-type EN10MB (Ethernet), capture size 262144 bytes
12:49:48.585996 IP 10.61.1.35.52108 > 151.101.128.70.443: Flags [S], seq 3528876158, win 29200, options [mss 1460,sackOK,TS val 454081318 ecr 0,nop,wscale 7],
length 0
12:49:48.587283 IP 151.101.128.70.443 > 10.61.1.35.52108: Flags [S.], seq 1059600824, ack 3528876159, win 28960, options [mss 1460,sackOK,TS val 8251787 ecr 454081318,nop,wscale 9], length 0
12:49:48.587325 IP 10.61.1.35.52108 > 151.101.128.70.443: Flags [.], ack 1, win 229, options [nop,nop,TS val 454081319 ecr 8251787], length 0
12:49:48.589839 IP 10.61.1.35.52108 > 151.101.128.70.443: Flags [P.], seq 1:187, ack 1, win 229, options [nop,nop,TS val 454081322 ecr 8251787], length 186
12:49:48.590816 IP 151.101.128.70.443 > 10.61.1.35.52108: Flags [.], ack 187, win 59, options [nop,nop,TS val 8251788 ecr 454081322], length 0
12:49:48.592036 IP 151.101.128.70.443 > 10.61.1.35.52108: Flags [P.], seq 1:5338, ack 187, win 59, options [nop,nop,TS val 8251788 ecr 454081322], length 5337
12:49:48.592058 IP 10.61.1.35 > 151.101.128.70: ICMP 10.61.1.35 unreachable - need to frag (mtu 1440), length 556
`
	for _, summary := range []bool{false, true} {
		res, err := text.Read(context.Background(), strings.NewReader(paste), "host.txt", text.Tcpdump,
			track.Options{Summary: track.Summary{Enabled: summary}})
		if err != nil || len(res) != 1 || len(res[0].ICMP) != 1 {
			t.Fatalf("summary %v: %+v, %v", summary, res, err)
		}
		if e := res[0].ICMP[0]; e.AttemptFrame != 4 || e.MTU != 1440 {
			t.Errorf("summary %v: event %+v, want the SYN's line 4 joined", summary, e)
		}
		kept := false
		for _, a := range res[0].Attempts {
			kept = kept || a.Client.String() == "10.61.1.35:52108" && a.MSS == 1460 && len(a.SYN) == 1
		}
		if !kept {
			t.Errorf("summary %v: the SYN's attempt is not kept: %+v", summary, res[0].Attempts)
		}
	}
	unreach := strings.Replace(paste, "ICMP 10.61.1.35 unreachable - need to frag (mtu 1440)", "ICMP host 10.61.1.35 unreachable", 1)
	res, err := text.Read(context.Background(), strings.NewReader(unreach), "host.txt", text.Tcpdump, track.Options{})
	if err != nil || len(res) != 1 || len(res[0].ICMP) != 1 || res[0].ICMP[0].What != "host-unreachable" ||
		res[0].ICMP[0].AttemptFrame != 0 {
		t.Errorf("host unreachable: %+v, %v", res, err)
	}
}
