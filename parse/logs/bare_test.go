package logs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// Lines pasted without their log's prefix: a field ticket's netfilter LOG
// line (fixtures/field/filter-forward-drop--flannel-issue-2055, its
// journal prefix cut off), a TRACE line of another, and containerd's
// error for a sandbox Cilium's CNI could not tear down (a published
// syslog excerpt, its time and level cut off) as tickets paste them.
func TestBareLines(t *testing.T) {
	in := "filter_FWD_public_REJECT: IN=flannel.1 OUT=cni0 MAC=3e:1c:a7:5b:02:d4:c2:45:9e:18:6f:b3:08:00 SRC=10.244.1.0 DST=10.244.0.2 LEN=69 TOS=0x00 PREC=0x00 TTL=63 ID=47797 PROTO=UDP SPT=53410 DPT=53 LEN=49\n" +
		"IN=eth0 OUT= MAC=00:16:3e:00:00:01:00:16:3e:00:00:02:08:00 SRC=10.0.0.5 DST=10.0.0.9 LEN=60 PROTO=TCP SPT=40000 DPT=6443 SYN\n" +
		"msg=\"StopPodSandbox for \\\"a936d96c25bc\\\" failed\" error=\"failed to destroy network for sandbox \\\"a936d96c25bc\\\": plugin type=\\\"cilium-cni\\\" name=\\\"cilium\\\" failed (delete): unable to connect to Cilium daemon\"\n" +
		"msg=\"RunPodSandbox for &PodSandboxMetadata{Name:web-0,} returns sandbox id \\\"b1\\\"\"\n"
	evs, err := Logs(strings.NewReader(in), "bare.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d %s %s %.40s error=%.30s", e.Pos.Line, e.Source, e.Level, e.Message, e.Fields["error"]))
	}
	parsetest.CheckLines(t, "bare.txt", got, []string{
		"1 kernel  filter_FWD_public_REJECT: IN=flannel.1 O error=",
		"2 kernel  IN=eth0 OUT= MAC=00:16:3e:00:00:01:00:16 error=",
		`3  error StopPodSandbox for "a936d96c25bc" failed error=failed to destroy network for `,
		`4   RunPodSandbox for &PodSandboxMetadata{Na error=`,
	})
	for _, s := range []string{"IN=eth0 OUT=eth1 then prose", "msg is not a key here"} {
		if _, _, ok := (&logReader{}).parseLine(s); ok {
			t.Errorf("%q read as a log line", s)
		}
	}
}

// The command above a log pasted without its prompt names the log's
// source, and is no bad line; further down, a line naming a program is
// the log's.
func TestPastedCommandAbove(t *testing.T) {
	in := "journalctl -u kube-proxy --no-pager\n" +
		"Nov 23 12:00:02 node1 kube-proxy[812]: E1123 12:00:02.000000     812 proxier.go:1] Failed to sync\n" +
		"Nov 23 12:00:03 node1 kube-proxy[812]: I1123 12:00:03.000000     812 proxier.go:2] Synced\n"
	evs, err := Logs(strings.NewReader(in), "log.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Pos.Line != 2 || evs[0].Source != "kube-proxy" {
		t.Errorf("events %+v", evs)
	}
}

// Kernel lines pasted without dmesg's or syslog's prefix, as a ticket
// quotes the one line that matters (cortexproject/cortex#1821's "TCP:
// request_sock_TCP: Possible SYN flooding on port 11211."): the kernel's,
// when the message is one the kernel prints, in the quotes of a ticket's
// prose too (CESNET/netopeer2#1467); a subsystem's name before other
// words is not.
func TestBareKernelLines(t *testing.T) {
	in := "TCP: request_sock_TCP: Possible SYN flooding on port 11211.\n" +
		"nf_conntrack: nf_conntrack: table full, dropping packet\n" +
		"neighbour: arp_cache: neighbor table overflow!\n" +
		"IPv4: martian source 10.244.1.5 from 10.244.0.3, on dev eth0\n" +
		"\"TCP: request_sock_TCPv6: Possible SYN flooding on port 830. Sending cookies. Check SNMP counters\"\n"
	evs, err := Logs(strings.NewReader(in), "dmesg.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d %s %.40s", e.Pos.Line, e.Source, e.Message))
	}
	parsetest.CheckLines(t, "dmesg.txt", got, []string{
		"1 kernel TCP: request_sock_TCP: Possible SYN floo",
		"2 kernel nf_conntrack: nf_conntrack: table full, ",
		"3 kernel neighbour: arp_cache: neighbor table ove",
		"4 kernel IPv4: martian source 10.244.1.5 from 10.",
		"5 kernel TCP: request_sock_TCPv6: Possible SYN fl",
	})
	for _, s := range []string{"TCP: the port was closed", "IPv6: address added to eth0"} {
		if _, _, ok := (&logReader{}).parseLine(s); ok {
			t.Errorf("%q read as a log line", s)
		}
	}
}
