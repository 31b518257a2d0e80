package analyzer

import (
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/model"
)

func unanswered(client, server string, frame, retx int) model.Attempt {
	a := model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: frame}, Client: netip.MustParseAddrPort(client),
		Server: netip.MustParseAddrPort(server), Outcome: model.OutcomeUnanswered, Start: time.Unix(1700000000, 0)}
	for i := 0; i <= retx; i++ {
		a.SYN = append(a.SYN, model.Seg{Frame: frame + i})
	}
	return a
}

func withLBService(s *model.Snapshot, ip string) *model.Snapshot {
	svc := model.Service{}
	svc.ObjectMeta = metav1.ObjectMeta{Namespace: "web", Name: "front"}
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.ClusterIP = "10.96.7.7"
	svc.Spec.Ports = []corev1.ServicePort{{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP}}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	svc.Source.Pos = model.Pos{File: "svc.json", Line: 3, Object: "Service web/front"}
	s.Kube.Services = append(s.Kube.Services, svc)
	s.Inputs = append(s.Inputs, model.Input{Path: "svc.json", Kind: model.KindKube})
	return s
}

func TestSynUnansweredSeverity(t *testing.T) {
	// A lone SYN without retransmission may be cut off by the capture's end.
	if f := run1(t, SynUnanswered, withAttempts(&model.Snapshot{}, unanswered("10.0.0.1:40000", "10.96.7.7:443", 1, 0))); len(f) != 0 {
		t.Errorf("lone SYN reported: %+v", f)
	}
	s := withAttempts(&model.Snapshot{}, unanswered("10.0.0.1:40000", "10.96.7.7:443", 1, 2), unanswered("10.0.0.2:40001", "10.96.7.7:443", 9, 0))
	f := run1(t, SynUnanswered, s)
	if len(f) != 1 || f[0].Severity != Warning || f[0].Facts["attempts"] != 2 || f[0].Facts["syn_retransmissions"] != 2 {
		t.Fatalf("capture alone: %+v", f)
	}
	f = run1(t, SynUnanswered, withLBService(s, "192.168.200.99"))
	if len(f) != 1 || f[0].Severity != Error || f[0].Facts["server_is"] != "ClusterIP 10.96.7.7:443 of Service web/front" {
		t.Fatalf("with the Service: %+v", f)
	}
	// A SYN-only capture filter proves nothing about replies.
	s = withAttempts(&model.Snapshot{}, unanswered("10.0.0.1:40000", "10.96.7.7:443", 1, 2))
	s.Captures = []model.CaptureInfo{{File: "c.pcap", Command: `tcpdump -nn port 443 and "tcp[tcpflags] & (tcp-syn) != 0"`}}
	if f := run1(t, SynUnanswered, s); len(f) != 0 {
		t.Errorf("filtered capture judged: %+v", f)
	}
}

func TestARPFlapSeverity(t *testing.T) {
	claim := func(mac string, frame int) model.ARPEvent {
		return model.ARPEvent{Pos: model.Pos{File: "a.pcap", Frame: frame}, Op: "reply", IP: netip.MustParseAddr("192.168.200.99"), MAC: mac}
	}
	s := &model.Snapshot{ARP: []model.ARPEvent{claim("02:00:00:00:00:01", 1), claim("02:00:00:00:00:01", 2), claim("02:00:00:00:00:02", 3)}}
	s.Inputs = append(s.Inputs, model.Input{Path: "a.pcap", Kind: model.KindCapture})
	f := run1(t, ARPFlap, s)
	if len(f) != 1 || f[0].Severity != Warning || f[0].Facts["changes"] != 1 {
		t.Fatalf("one change: %+v", f)
	}
	if ev := evStrings(f[0].Evidence); len(ev) != 2 || ev[0] != "a.pcap#frame=1" || ev[1] != "a.pcap#frame=3" {
		t.Errorf("evidence %v", ev)
	}
	s.ARP = append(s.ARP, claim("02:00:00:00:00:01", 4))
	if f := run1(t, ARPFlap, s); len(f) != 1 || f[0].Severity != Warning || f[0].Facts["changes"] != 2 {
		t.Fatalf("back and forth: %+v", f)
	}
	s.ARP = s.ARP[:3]
	if f := run1(t, ARPFlap, withLBService(s, "192.168.200.99")); len(f) != 1 || f[0].Severity != Error {
		t.Fatalf("a LoadBalancer IP: %+v", f)
	}
}
