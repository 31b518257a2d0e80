package rules

import (
	"context"
	"net/netip"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// Hand-built snapshots exercise each branch of the two first rules; the
// tests on the incident bundles in fixtures/ run them on real evidence.

func sysctl(name, value string, line int) model.Sysctl {
	return model.Sysctl{Name: name, Value: value, Pos: model.Pos{File: "sysctl.txt", Line: line}}
}

func withSysctls(s *model.Snapshot, kv ...model.Sysctl) *model.Snapshot {
	s.Sysctls = append(s.Sysctls, kv...)
	s.Inputs = append(s.Inputs, model.Input{Path: "sysctl.txt", Kind: model.KindSysctl})
	return s
}

func withAPIServerFlag(s *model.Snapshot, value string) *model.Snapshot {
	s.Components = append(s.Components, model.Component{Name: "kube-apiserver",
		Args: []model.Arg{{Name: "service-node-port-range", Value: value, Pos: model.Pos{File: "kube-apiserver.yaml", Line: 30}}}})
	s.Inputs = append(s.Inputs, model.Input{Path: "kube-apiserver.yaml", Kind: model.KindComponents})
	return s
}

func withNodePortService(s *model.Snapshot, ns, name string, nodePort int32) *model.Snapshot {
	svc := model.Service{}
	svc.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: name}
	svc.Spec.Ports = []corev1.ServicePort{{Port: 443, NodePort: nodePort, Protocol: corev1.ProtocolTCP}}
	svc.Source.Pos = model.Pos{File: "services.json", Line: 12, Object: model.ObjectName("Service", ns, name)}
	s.Kube.Services = append(s.Kube.Services, svc)
	s.Inputs = append(s.Inputs, model.Input{Path: "services.json", Kind: model.KindKube})
	return s
}

func withIPVS(s *model.Snapshot, addr string, line int) *model.Snapshot {
	s.IPVS = append(s.IPVS, model.IPVSService{Proto: "TCP", Addr: netip.MustParseAddrPort(addr), Scheduler: "rr",
		Pos: model.Pos{File: "ipvsadm.txt", Line: line}})
	s.Inputs = append(s.Inputs, model.Input{Path: "ipvsadm.txt", Kind: model.KindIPVS})
	return s
}

func run1(t *testing.T, r *analyzer.Rule, s *model.Snapshot) []analyzer.Finding {
	t.Helper()
	res := analyzer.Run(context.Background(), s, []*analyzer.Rule{r}, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("rule errors: %+v", res.Errors)
	}
	return res.Findings
}

func TestEphemeralNodePortOverlap(t *testing.T) {
	t.Run("hit: seed 002 ranges with an allocated NodePort", func(t *testing.T) {
		s := withSysctls(&model.Snapshot{}, sysctl("net.ipv4.ip_local_port_range", "1024 65000", 3))
		withAPIServerFlag(s, "20000-40000")
		withNodePortService(s, "kube-system", "kubernetes-dashboard", 36704)
		fs := run1(t, EphemeralNodePortOverlap, s)
		if len(fs) != 1 {
			t.Fatalf("got %d findings, want 1", len(fs))
		}
		f := fs[0]
		if f.Severity != analyzer.Error {
			t.Errorf("severity %v, want error", f.Severity)
		}
		wantFacts := map[string]any{
			"ip_local_port_range": "1024-65000", "nodeport_range": "20000-40000", "overlap": "20000-40000",
			"overlap_ports": 20001, "allocated_nodeports_in_overlap": []uint16{36704},
			"nodeport_range_source": "kube-apiserver --service-node-port-range",
		}
		for k, v := range wantFacts {
			if !reflect.DeepEqual(f.Facts[k], v) {
				t.Errorf("fact %s = %#v, want %#v", k, f.Facts[k], v)
			}
		}
		wantEv := []string{"sysctl.txt:3", "kube-apiserver.yaml:30", "services.json:12 (Service kube-system/kubernetes-dashboard)"}
		if got := evStrings(f.Evidence); !reflect.DeepEqual(got, wantEv) {
			t.Errorf("evidence %v, want %v", got, wantEv)
		}
	})
	t.Run("warning: default NodePort range, nothing allocated known", func(t *testing.T) {
		s := withSysctls(&model.Snapshot{}, sysctl("net.ipv4.ip_local_port_range", "1024\t65000", 1))
		fs := run1(t, EphemeralNodePortOverlap, s)
		if len(fs) != 1 || fs[0].Severity != analyzer.Warning || fs[0].Facts["overlap"] != "30000-32767" ||
			fs[0].Facts["nodeport_range_source"] != "kube-apiserver default" {
			t.Fatalf("got %+v", fs)
		}
	})
	t.Run("partial reservation leaves the rest", func(t *testing.T) {
		s := withSysctls(&model.Snapshot{}, sysctl("net.ipv4.ip_local_port_range", "1024 65000", 1),
			sysctl("net.ipv4.ip_local_reserved_ports", "30000-31000,32000", 2))
		fs := run1(t, EphemeralNodePortOverlap, s)
		if len(fs) != 1 || fs[0].Facts["overlap"] != "31001-31999,32001-32767" {
			t.Fatalf("got %+v", fs)
		}
	})
	misses := map[string]*model.Snapshot{
		"kernel default range": withSysctls(&model.Snapshot{}, sysctl("net.ipv4.ip_local_port_range", "32768 60999", 1)),
		"reserved covers the NodePort range": withAPIServerFlag(withSysctls(&model.Snapshot{},
			sysctl("net.ipv4.ip_local_port_range", "1024 65000", 1),
			sysctl("net.ipv4.ip_local_reserved_ports", "20000-40000", 2)), "20000-40000"),
		"range moved above the NodePorts": withAPIServerFlag(withSysctls(&model.Snapshot{},
			sysctl("net.ipv4.ip_local_port_range", "40001 65000", 1)), "20000-40000"),
		"no port range in the sysctl file": withSysctls(&model.Snapshot{}, sysctl("net.ipv4.tcp_tw_reuse", "1", 1)),
	}
	for name, s := range misses {
		t.Run("miss: "+name, func(t *testing.T) {
			if fs := run1(t, EphemeralNodePortOverlap, s); len(fs) != 0 {
				t.Errorf("got %d findings, want none: %+v", len(fs), fs)
			}
		})
	}
}

// seed002Attempt is the reset attempt of seed 002, frames 649-654.
func seed002Attempt() model.Attempt {
	t0 := time.Date(2022, 9, 15, 19, 9, 2, 533940000, time.UTC)
	seg := func(frame int, d time.Duration) model.Seg { return model.Seg{Frame: frame, Time: t0.Add(d)} }
	return model.Attempt{
		Pos:       model.Pos{File: "capture.pcap", Frame: 649},
		Client:    netip.MustParseAddrPort("10.23.77.129:36704"),
		Server:    netip.MustParseAddrPort("10.23.77.138:80"),
		Outcome:   model.OutcomeSynAckClientRST,
		SYN:       []model.Seg{seg(649, 0), seg(652, 1030772*time.Microsecond)},
		SYNACK:    []model.Seg{seg(650, 22*time.Microsecond), seg(653, 1030797*time.Microsecond)},
		ClientRST: []model.Seg{seg(651, 263*time.Microsecond), seg(654, 1030999*time.Microsecond)},
	}
}

func withAttempts(s *model.Snapshot, as ...model.Attempt) *model.Snapshot {
	s.Attempts = append(s.Attempts, as...)
	s.Inputs = append(s.Inputs, model.Input{Path: "capture.pcap", Kind: model.KindCapture})
	return s
}

func TestSynAckReset(t *testing.T) {
	t.Run("hit joined with IPVS and Services", func(t *testing.T) {
		s := withAttempts(&model.Snapshot{}, seed002Attempt())
		withIPVS(s, "169.254.20.10:36704", 15)
		withNodePortService(s, "kube-system", "kubernetes-dashboard", 36704)
		withSysctls(s, sysctl("net.ipv4.ip_local_port_range", "1024 65000", 1))
		withAPIServerFlag(s, "20000-40000")
		fs := run1(t, SynAckReset, s)
		if len(fs) != 1 {
			t.Fatalf("got %d findings, want 1", len(fs))
		}
		f := fs[0]
		if f.Severity != analyzer.Error {
			t.Errorf("severity %v", f.Severity)
		}
		wantFacts := map[string]any{
			"client": "10.23.77.129", "client_ports": []uint16{36704}, "owned_ports": []uint16{36704},
			"nodeport_services": []string{"kube-system/kubernetes-dashboard"},
			"tuples":            []string{"10.23.77.129:36704 -> 10.23.77.138:80"},
			"attempts":          1, "synacks": 2, "client_resets": 2, "ip_local_port_range": "1024-65000",
		}
		for k, v := range wantFacts {
			if !reflect.DeepEqual(f.Facts[k], v) {
				t.Errorf("fact %s = %#v, want %#v", k, f.Facts[k], v)
			}
		}
		wantEv := []string{
			"capture.pcap#frame=649", "capture.pcap#frame=650", "capture.pcap#frame=651",
			"capture.pcap#frame=652", "capture.pcap#frame=653", "capture.pcap#frame=654",
			"sysctl.txt:1", "ipvsadm.txt:15", "services.json:12 (Service kube-system/kubernetes-dashboard)",
			"kube-apiserver.yaml:30",
		}
		if got := evStrings(f.Evidence); !reflect.DeepEqual(got, wantEv) {
			t.Errorf("evidence\n got %v\nwant %v", got, wantEv)
		}
	})
	t.Run("capture alone is a warning", func(t *testing.T) {
		fs := run1(t, SynAckReset, withAttempts(&model.Snapshot{}, seed002Attempt()))
		if len(fs) != 1 || fs[0].Severity != analyzer.Warning || fs[0].Facts["owned_ports"] != nil {
			t.Fatalf("got %+v", fs)
		}
	})
	t.Run("port not owned stays a warning", func(t *testing.T) {
		s := withAttempts(&model.Snapshot{}, seed002Attempt())
		withIPVS(s, "169.254.20.10:32080", 10)
		fs := run1(t, SynAckReset, s)
		if len(fs) != 1 || fs[0].Severity != analyzer.Warning {
			t.Fatalf("got %+v", fs)
		}
	})
	t.Run("miss: handshakes complete", func(t *testing.T) {
		a := seed002Attempt()
		a.Outcome = model.OutcomeEstablished
		a.ClientRST = nil
		if fs := run1(t, SynAckReset, withAttempts(&model.Snapshot{}, a)); len(fs) != 0 {
			t.Fatalf("got %+v", fs)
		}
	})
	t.Run("skipped without a capture", func(t *testing.T) {
		res := analyzer.Run(context.Background(), withSysctls(&model.Snapshot{}), []*analyzer.Rule{SynAckReset}, nil)
		if len(res.Skipped) != 1 || res.Skipped[0].Missing[0] != model.KindCapture {
			t.Fatalf("skipped = %+v", res.Skipped)
		}
	})
}

func evStrings(ev []analyzer.Evidence) []string {
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = e.Pos.String()
	}
	return out
}
