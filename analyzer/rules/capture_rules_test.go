package rules

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/dataplane"
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
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["attempts"] != 2 || f[0].Facts["syn_retransmissions"] != 2 {
		t.Fatalf("capture alone: %+v", f)
	}
	f = run1(t, SynUnanswered, withLBService(s, "192.168.200.99"))
	// The Service says the address must answer; why it does not stays
	// open (a firewall, a policy, the endpoint): a warning of likely cause.
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Certainty != analyzer.Likely || f[0].Facts["server_is"] != "ClusterIP 10.96.7.7:443 of Service web/front" {
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
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["changes"] != 1 {
		t.Fatalf("one change: %+v", f)
	}
	if ev := evStrings(f[0].Evidence); len(ev) != 2 || ev[0] != "a.pcap#frame=1" || ev[1] != "a.pcap#frame=3" {
		t.Errorf("evidence %v", ev)
	}
	s.ARP = append(s.ARP, claim("02:00:00:00:00:01", 4))
	if f := run1(t, ARPFlap, s); len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["changes"] != 2 {
		t.Fatalf("back and forth: %+v", f)
	}
	s.ARP = s.ARP[:3]
	// A LoadBalancer IP: two controllers or a failover are not told
	// apart by the capture, so a warning.
	if f := run1(t, ARPFlap, withLBService(s, "192.168.200.99")); len(f) != 1 || f[0].Severity != analyzer.Warning || len(f[0].Alternatives) == 0 {
		t.Fatalf("a LoadBalancer IP: %+v", f)
	}
}

func TestGammaQ(t *testing.T) {
	// Chi-square survival values: P(X2 > 7.815 | df 3) = 0.05,
	// P(X2 > 16.27 | df 3) = 0.001, P(X2 > 3.841 | df 1) = 0.05.
	for _, c := range []struct{ df, x2, want float64 }{{3, 7.815, 0.05}, {3, 16.27, 0.001}, {1, 3.841, 0.05}, {10, 18.307, 0.05}} {
		if got := gammaQ(c.df/2, c.x2/2); math.Abs(got-c.want) > c.want*0.01 {
			t.Errorf("Q(df %v, x2 %v) = %v, want %v", c.df, c.x2, got, c.want)
		}
	}
}

// The exact test: the chance of every outcome no more likely than the one
// seen, 3 x (1/3)^n for n connections all on one of three equal backends.
func TestSkewPValueExact(t *testing.T) {
	third := []dataplane.Backend{{Probability: 1.0 / 3}, {Probability: 1.0 / 3}, {Probability: 1.0 / 3}}
	for _, c := range []struct {
		counts []int
		want   float64
		test   string
	}{
		{[]int{8, 0, 0}, 3.0 / 6561, "exact multinomial test"},
		{[]int{12, 0, 0}, 3 / math.Pow(3, 12), "exact multinomial test"},
		// 7-1-0 in any order (6 x 8/6561) and 8-0-0 (3/6561) are no
		// more likely than 7-1-0.
		{[]int{7, 1, 0}, 51.0 / 6561, "exact multinomial test"},
		{[]int{30, 0, 0}, 0, "chi-square 60.0 with 2 degrees of freedom"},
	} {
		n := 0
		for _, x := range c.counts {
			n += x
		}
		got, test := skewPValue(c.counts, third, n)
		if test != c.test || c.want > 0 && math.Abs(got-c.want) > c.want*1e-6 {
			t.Errorf("%v: %v (%s), want %v (%s)", c.counts, got, test, c.want, c.test)
		}
	}
	// kube-proxy writes 1/3 rounded: 8-0-0 and 0-8-0 are still equally likely.
	rounded := []dataplane.Backend{{Probability: 0.333333}, {Probability: 0.3333335}, {Probability: 0.3333335}}
	if got, _ := skewPValue([]int{8, 0, 0}, rounded, 8); math.Abs(got-3.0/6561) > 1e-6 {
		t.Errorf("rounded probabilities: %v, want %v", got, 3.0/6561)
	}
}

func TestConnectionSkew(t *testing.T) {
	rs := &model.Ruleset{Format: "iptables-save", Family: "ipv4", Pos: model.Pos{File: "ipt.txt", Line: 1}}
	nat := &model.Table{Name: "nat"}
	rs.Tables = []*model.Table{nat}
	svc := &model.Chain{Name: "KUBE-SVC-X"}
	nat.Chains = append(nat.Chains, &model.Chain{Name: "KUBE-SERVICES", Rules: []*model.Rule{{Target: "KUBE-SVC-X", Proto: "tcp",
		Dst: "10.96.0.1/32", DPort: "443", Comment: "default/kubernetes:https cluster IP", Pos: model.Pos{File: "ipt.txt", Line: 5}}}}, svc)
	eps := []string{"10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443"}
	for i, ep := range eps {
		sep := fmt.Sprintf("KUBE-SEP-%d", i)
		r := &model.Rule{Target: sep, Pos: model.Pos{File: "ipt.txt", Line: 10 + i}}
		if i < 2 {
			r.Statistic, r.Probability = "random", 1/float64(3-i)
		}
		svc.Rules = append(svc.Rules, r)
		nat.Chains = append(nat.Chains, &model.Chain{Name: sep, Rules: []*model.Rule{{Target: "DNAT", Proto: "tcp", ToDestination: ep,
			Pos: model.Pos{File: "ipt.txt", Line: 20 + i}}}})
	}
	snap := func(perBackend ...int) *model.Snapshot {
		s := &model.Snapshot{Netfilter: []*model.Ruleset{rs}, Inputs: []model.Input{{Kind: model.KindNetfilter}, {Kind: model.KindCapture}}}
		port := 30000
		for i, n := range perBackend {
			for range n {
				port++
				s.Attempts = append(s.Attempts, model.Attempt{Client: netip.AddrPortFrom(netip.MustParseAddr("10.1.0.9"), uint16(port)),
					Server: netip.MustParseAddrPort(eps[i]), Outcome: model.OutcomeEstablished, SYN: []model.Seg{{Frame: port}}, Pos: model.Pos{File: "c.pcap", Frame: port}})
			}
		}
		return s
	}
	if f := run1(t, ConnectionSkew, snap(11, 9, 10)); len(f) != 0 {
		t.Errorf("even counts reported: %+v", f)
	}
	f := run1(t, ConnectionSkew, snap(30, 0, 0))
	if len(f) != 1 || f[0].Facts["attempts"] != 30 || f[0].Facts["test"] != "chi-square 60.0 with 2 degrees of freedom" {
		t.Fatalf("all on one backend: %+v", f)
	}
	// Too few for chi-square, but all on one: the exact chance, 3 x (1/3)^12.
	f = run1(t, ConnectionSkew, snap(12, 0, 0))
	if len(f) != 1 || f[0].Facts["p_value"] != "5.6e-06" {
		t.Fatalf("12 on one backend: %+v", f)
	}
	// A capture read in summary mode keeps established connections as
	// per-server counters: they count the same.
	folded := snap()
	folded.EndpointStats = []model.EndpointStats{{File: "c.pcap", Server: netip.MustParseAddrPort(eps[0]), Outcome: model.OutcomeEstablished, Attempts: 30, Clients: 1,
		ClientAddrs: []netip.Addr{netip.MustParseAddr("10.1.0.9")}}}
	f = run1(t, ConnectionSkew, folded)
	if len(f) != 1 || f[0].Facts["attempts"] != 30 || f[0].Facts["test"] != "chi-square 60.0 with 2 degrees of freedom" {
		t.Fatalf("folded, all on one backend: %+v", f)
	}
	if ev := evStrings(f[0].Evidence); len(ev) == 0 || ev[len(ev)-1] != "c.pcap" {
		t.Errorf("folded evidence %v", ev)
	}
	// A folded client address that is a backend's makes that backend
	// local (reached over loopback, unseen): it is left out of the test.
	folded.EndpointStats[0].ClientAddrs = append(folded.EndpointStats[0].ClientAddrs, netip.MustParseAddr("10.0.0.3"))
	f = run1(t, ConnectionSkew, folded)
	if len(f) != 1 || f[0].Facts["test"] != "chi-square 30.0 with 1 degrees of freedom" {
		t.Fatalf("folded, one backend local: %+v", f)
	}
}

func TestBusiestServerCountsFolded(t *testing.T) {
	s := withAttempts(&model.Snapshot{}, unanswered("10.0.0.9:40000", "10.0.0.1:6443", 1, 0))
	s.EndpointStats = []model.EndpointStats{{Server: netip.MustParseAddrPort("10.0.0.1:6443"), Attempts: 7},
		{Server: netip.MustParseAddrPort("10.0.0.2:443"), Attempts: 3}}
	if srv, n, _ := busiestServer(s, 6443); srv != "10.0.0.1" || n != 8 {
		t.Errorf("one server: %q %d, want 10.0.0.1 8", srv, n)
	}
	s.EndpointStats = append(s.EndpointStats, model.EndpointStats{Server: netip.MustParseAddrPort("10.0.0.2:6443"), Attempts: 1})
	if srv, n, _ := busiestServer(s, 6443); srv != "" || n != 0 {
		t.Errorf("two servers: %q %d, want none", srv, n)
	}
}

func TestSynFailuresScan(t *testing.T) {
	scan := func(ports int) *model.Snapshot {
		var as []model.Attempt
		for i := range ports {
			as = append(as, unanswered("10.0.0.1:40000", fmt.Sprintf("10.96.7.7:%d", 1000+i), 10*i+1, 1))
		}
		as = append(as, unanswered("10.0.0.1:40001", "10.96.7.7:443", 500, 2))
		return withLBService(withAttempts(&model.Snapshot{}, as...), "192.168.200.99")
	}
	f := run1(t, SynUnanswered, scan(12))
	if len(f) != 2 {
		t.Fatalf("12 ports and a Service port: %d findings, want the scan and the Service port: %+v", len(f), f)
	}
	var sc, svc *analyzer.Finding
	for i := range f {
		if _, ok := f[i].Facts["ports"]; ok {
			sc = &f[i]
		} else {
			svc = &f[i]
		}
	}
	if sc == nil || svc == nil {
		t.Fatalf("findings %+v", f)
	}
	if sc.Facts["ports"] != 12 || sc.Facts["attempts"] != 12 || sc.Facts["syn_retransmissions"] != 12 || sc.Severity != analyzer.Warning ||
		sc.Facts["port_list"] != "1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011" {
		t.Errorf("scan %+v", sc)
	}
	if ev := evStrings(sc.Evidence); len(ev) != maxGroupEvidence || ev[0] != "c.pcap#frame=1" {
		t.Errorf("scan evidence %v", ev)
	}
	// The port a Service names is told on its own (a warning: why it
	// does not answer is not shown).
	if svc.Facts["server"] != "10.96.7.7:443" || svc.Severity != analyzer.Warning {
		t.Errorf("service port %+v", svc)
	}
	// Under scan_ports, each port is its own finding.
	if f := run1(t, SynUnanswered, scan(9)); len(f) != 10 {
		t.Errorf("9 ports: %d findings, want 10", len(f))
	}
	// A capture read in summary mode counted a scan's later ports per host:
	// they join the ports kept one by one, whatever scan_ports says.
	counted := withAttempts(&model.Snapshot{}, unanswered("10.0.0.1:40000", "10.96.9.9:1000", 1, 0),
		unanswered("10.0.0.1:40000", "10.96.9.9:1001", 3, 0))
	st := model.EndpointStats{File: "c.pcap", Server: netip.MustParseAddrPort("10.96.9.9:0"), Outcome: model.OutcomeUnanswered,
		Attempts: 20, Clients: 1, ClientAddrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}
	for p := range 20 {
		st.Ports = append(st.Ports, uint16(2000+p))
	}
	counted.EndpointStats = []model.EndpointStats{st}
	f = run1(t, SynUnanswered, counted)
	if len(f) != 1 || f[0].Facts["ports"] != 22 || f[0].Facts["attempts"] != 22 || f[0].Facts["attempts_kept"] != 2 ||
		!strings.HasPrefix(f[0].Facts["port_list"].(string), "1000, 1001, 2000, 2001, ") {
		t.Fatalf("counted per host: %+v", f)
	}
	// A Node's address names the host, not its ports: a node that does
	// not answer on many ports is one finding, which says what it is.
	s := scan(12)
	node := model.Node{}
	node.Name = "worker-3"
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.96.7.7"}}
	node.Source.Pos = model.Pos{File: "nodes.json", Line: 9, Object: "Node worker-3"}
	s.Kube.Nodes = append(s.Kube.Nodes, node)
	f = run1(t, SynUnanswered, s)
	if len(f) != 2 {
		t.Fatalf("with the Node: %d findings: %+v", len(f), f)
	}
	for _, x := range f {
		if x.Facts["ports"] == 12 && x.Facts["server_is"] != "InternalIP of Node worker-3" {
			t.Errorf("scan of a node: %+v", x.Facts)
		}
	}
}

func TestARPFlapLongTimeline(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap", Kind: model.KindCapture}}}
	for i := range 30 {
		mac := fmt.Sprintf("02:00:00:00:00:%02x", i%8)
		s.ARP = append(s.ARP, model.ARPEvent{Pos: model.Pos{File: "a.pcap", Frame: i + 1}, Op: "reply",
			IP: netip.MustParseAddr("192.168.200.99"), MAC: mac, Time: time.Unix(1700000000+int64(i), 0)})
	}
	f := run1(t, ARPFlap, s)
	if len(f) != 1 {
		t.Fatalf("findings %+v", f)
	}
	if want := "192.168.200.99 is claimed by 8 MAC addresses: 02:00:00:00:00:00, 02:00:00:00:00:01, 02:00:00:00:00:02, " +
		"02:00:00:00:00:03, 02:00:00:00:00:04 and 3 more"; f[0].Title != want {
		t.Errorf("title %q, want %q", f[0].Title, want)
	}
	if !strings.Contains(f[0].Summary, " -> ... 18 more.") || strings.Count(f[0].Summary, " -> ") != maxTimeline {
		t.Errorf("summary %q: want %d owners then how many more", f[0].Summary, maxTimeline)
	}
	if tl := f[0].Facts["timeline"].([]string); len(tl) != 30 || f[0].Facts["changes"] != 29 {
		t.Errorf("timeline %d entries, changes %v", len(tl), f[0].Facts["changes"])
	}
}

func TestICMPTimeExceededPerDestination(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "t.pcap", Kind: model.KindCapture}}}
	frame := 0
	for hop, router := range []string{"192.168.1.1", "10.1.1.1", "10.2.2.2"} {
		for probe := range 3 {
			frame += 2
			s.ICMP = append(s.ICMP, model.ICMPEvent{Pos: model.Pos{File: "t.pcap", Frame: frame}, From: netip.MustParseAddr(router),
				To: netip.MustParseAddr("192.168.1.10"), Type: 11, What: "ttl-exceeded", QuotedProto: "udp",
				Quoted: model.Tuple{Src: netip.MustParseAddrPort("192.168.1.10:40000"),
					Dst: netip.AddrPortFrom(netip.MustParseAddr("8.8.8.8"), uint16(33434+3*hop+probe))}})
		}
	}
	f := run1(t, ICMPUnreachable, s)
	if len(f) != 1 {
		t.Fatalf("%d findings, want one for the destination: %+v", len(f), f)
	}
	if want := "traffic to 8.8.8.8 runs out of TTL at 3 routers: 192.168.1.1, 10.1.1.1, 10.2.2.2"; f[0].Title != want {
		t.Errorf("title %q, want %q", f[0].Title, want)
	}
	if ev := evStrings(f[0].Evidence); fmt.Sprint(ev) != "[t.pcap#frame=2 t.pcap#frame=8 t.pcap#frame=14]" {
		t.Errorf("evidence %v, want the first message of each router", ev)
	}
	if f[0].Facts["count"] != 9 || fmt.Sprint(f[0].Facts["from"]) != "[192.168.1.1 10.1.1.1 10.2.2.2]" {
		t.Errorf("facts %+v", f[0].Facts)
	}
}

func TestARPUnanswered(t *testing.T) {
	asker, vip := netip.MustParseAddr("192.168.200.1"), netip.MustParseAddr("192.168.200.99")
	snap := func(requests int, visible bool) *model.Snapshot {
		s := &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap", Kind: model.KindCapture}}}
		if visible { // the capture shows the asker's other request answered
			s.ARP = append(s.ARP, model.ARPEvent{Pos: model.Pos{File: "a.pcap", Frame: 1}, Op: "reply",
				IP: netip.MustParseAddr("192.168.200.61"), Target: asker, MAC: "02:00:00:00:00:61"})
		}
		for i := range requests {
			s.ARP = append(s.ARP, model.ARPEvent{Pos: model.Pos{File: "a.pcap", Frame: 10 + i}, Op: "request", IP: asker,
				Target: vip, MAC: "02:00:00:00:00:01", Unanswered: true, Time: time.Unix(1700000000+int64(i), 0)})
		}
		return s
	}
	f := run1(t, ARPUnanswered, snap(3, true))
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["requests"] != 3 || f[0].Title != "nobody answers ARP for 192.168.200.99: 3 requests from 192.168.200.1" {
		t.Fatalf("capture alone: %+v", f)
	}
	if ev := evStrings(f[0].Evidence); fmt.Sprint(ev) != "[a.pcap#frame=10 a.pcap#frame=11 a.pcap#frame=12]" {
		t.Errorf("evidence %v", ev)
	}
	// The same request seen twice within microseconds (tcpdump -i any on
	// a bridge), marked a copy as the capture reader marks it, is one
	// request.
	dup := snap(3, true)
	c := dup.ARP[len(dup.ARP)-1]
	c.Pos.Frame, c.Time, c.Copy = 99, c.Time.Add(20*time.Microsecond), true
	dup.ARP = append(dup.ARP, c)
	if f := run1(t, ARPUnanswered, dup); len(f) != 1 || f[0].Facts["requests"] != 3 {
		t.Errorf("with a copy: %+v", f)
	}
	// A capture that never shows the asker receiving would not show the
	// replies either; one request is not enough.
	if f := run1(t, ARPUnanswered, snap(3, false)); len(f) != 0 {
		t.Errorf("asker not visible: %+v", f)
	}
	if f := run1(t, ARPUnanswered, snap(1, true)); len(f) != 0 {
		t.Errorf("one request: %+v", f)
	}
	// The Service says the address must answer: judged even so, a
	// warning, as which node should announce it is not shown.
	f = run1(t, ARPUnanswered, withLBService(snap(3, false), "192.168.200.99"))
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["ip_is"] != "LoadBalancer IP 192.168.200.99 of Service web/front" {
		t.Fatalf("LoadBalancer IP: %+v", f)
	}
	// A full neighbor table alone: only for an address that must answer.
	neigh := func() *model.Snapshot {
		return &model.Snapshot{Inputs: []model.Input{{Path: "n.txt", Kind: model.KindNeighbors}},
			Neighbors: []model.Neighbor{{IP: vip, State: "FAILED", Dev: "eth0", Pos: model.Pos{File: "n.txt", Line: 2}},
				{IP: netip.MustParseAddr("192.168.200.1"), MAC: "02:00:00:00:00:01", State: "REACHABLE", Dev: "eth0",
					Pos: model.Pos{File: "n.txt", Line: 3}}}}
	}
	if f := run1(t, ARPUnanswered, neigh()); len(f) != 0 {
		t.Errorf("FAILED entry of an unknown address: %+v", f)
	}
	// The table asked for that address alone (ip neigh show ADDR): the
	// symptom, cause unknown.
	asked := neigh()
	asked.Neighbors = asked.Neighbors[:1]
	if f := run1(t, ARPUnanswered, asked); len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Certainty != analyzer.Unknown {
		t.Errorf("FAILED entry of a table asked for that address: %+v", f)
	}
	f = run1(t, ARPUnanswered, withLBService(neigh(), "192.168.200.99"))
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["neighbor_state"] != "FAILED" || f[0].Facts["requests"] != nil {
		t.Fatalf("neighbor table and Service: %+v", f)
	}
}

// Pasted text's times of day count from year 0, before Go's zero Time:
// the span of a group is still its first and last attempt.
func TestSynFailuresTextTimes(t *testing.T) {
	day := time.Date(0, 1, 1, 13, 11, 43, 0, time.UTC)
	a1, a2 := unanswered("10.0.0.1:40000", "10.96.7.7:443", 1, 2), unanswered("10.0.0.1:40001", "10.96.7.7:443", 9, 1)
	a1.Start, a2.Start = day, day.Add(2*time.Second)
	f := run1(t, SynUnanswered, withAttempts(&model.Snapshot{}, a1, a2))
	if len(f) != 1 || f[0].Facts["first"] != "0000-01-01T13:11:43Z" || f[0].Facts["last"] != "0000-01-01T13:11:45Z" {
		t.Fatalf("%+v", f)
	}
}

// Events a capture read in summary mode counted on a kept one (Repeats)
// count in the findings.
func TestEventRepeatsCount(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "c.pcap", Kind: model.KindCapture}}}
	s.ICMP = []model.ICMPEvent{{Pos: model.Pos{File: "c.pcap", Frame: 1}, From: netip.MustParseAddr("10.0.0.2"), To: netip.MustParseAddr("10.0.0.1"),
		Type: 3, Code: 3, What: "port-unreachable", QuotedProto: "udp", Repeats: 41,
		Quoted: model.Tuple{Src: netip.MustParseAddrPort("10.0.0.1:5000"), Dst: netip.MustParseAddrPort("10.0.0.2:53")}}}
	if f := run1(t, ICMPUnreachable, s); len(f) != 1 || f[0].Facts["count"] != 42 {
		t.Errorf("ICMP: %+v", f)
	}
	asker := netip.MustParseAddr("192.168.200.1")
	s.ARP = []model.ARPEvent{
		{Pos: model.Pos{File: "c.pcap", Frame: 2}, Op: "reply", IP: netip.MustParseAddr("192.168.200.61"), Target: asker, MAC: "02:00:00:00:00:61"},
		{Pos: model.Pos{File: "c.pcap", Frame: 3}, Op: "request", IP: asker, Target: netip.MustParseAddr("192.168.200.99"),
			Unanswered: true, Repeats: 9, Time: time.Unix(1700000000, 0)},
	}
	if f := run1(t, ARPUnanswered, s); len(f) != 1 || f[0].Facts["requests"] != 10 {
		t.Errorf("ARP: %+v", f)
	}
}

func TestSynFailuresSweep(t *testing.T) {
	sweep := func(hosts int) *model.Snapshot {
		var as []model.Attempt
		for i := range hosts {
			as = append(as, unanswered(fmt.Sprintf("10.0.0.1:%d", 40000+i), fmt.Sprintf("10.244.%d.7:9100", i), 10*i+1, 1))
		}
		return withAttempts(&model.Snapshot{}, as...)
	}
	f := run1(t, SynUnanswered, sweep(25))
	if len(f) != 1 || f[0].Facts["hosts"] != 25 || f[0].Facts["port"] != 9100 || f[0].Facts["attempts"] != 25 ||
		!strings.HasSuffix(f[0].Facts["host_list"].(string), "and 5 more") ||
		f[0].Title != "25 hosts do not answer on port 9100: 25 connection attempts from 10.0.0.1 got no reply" {
		t.Fatalf("25 hosts: %+v", f)
	}
	if f := run1(t, SynUnanswered, sweep(9)); len(f) != 9 {
		t.Errorf("9 hosts: %d findings, want 9", len(f))
	}
}
