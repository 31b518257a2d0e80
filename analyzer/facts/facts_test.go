package facts_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// open reads fixture files (paths under the repository root) as one
// snapshot, with every attempt of its captures, which must give no
// warning.
func open(t *testing.T, paths ...string) *analyzer.FactSet {
	t.Helper()
	snap := &model.Snapshot{}
	for _, p := range paths {
		s, warns, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), p), &parse.Options{KeepAttempts: true})
		if err != nil || len(warns) != 0 {
			t.Fatalf("open %s: %v %v", p, err, warns)
		}
		snap.Merge(s)
	}
	return analyzer.NewFactSet(snap)
}

func base(p model.Pos) string {
	p.File = filepath.Base(p.File)
	return p.String()
}

func TestAllFactsNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range facts.All() {
		if f.FactName() == "" || f.FactDoc() == "" || seen[f.FactName()] {
			t.Errorf("fact %q: empty or duplicate name, or no doc", f.FactName())
		}
		seen[f.FactName()] = true
	}
}

func TestAddrRoles(t *testing.T) {
	fs := open(t, "fixtures/incidents/vip-unannounced/service-ingress-nginx.json")
	vip := netip.MustParseAddr("192.168.210.99")
	x := facts.AddrRoles.Get(fs)
	rs := x.Of(vip, 443)
	if got := rs.Words(); got != "LoadBalancer IP 192.168.210.99:443 of Service ingress-nginx/ingress-nginx-controller" {
		t.Errorf("words %q", got)
	}
	if !rs.VIP() || !rs.Live() || !rs.OnLink() || !rs.NamePort() {
		t.Errorf("a LoadBalancer IP: VIP %v, live %v, on a link %v, names its port %v", rs.VIP(), rs.Live(), rs.OnLink(), rs.NamePort())
	}
	if got := rs.AddrWords(vip); fmt.Sprint(got) != "[LoadBalancer IP 192.168.210.99 of Service ingress-nginx/ingress-nginx-controller]" {
		t.Errorf("address words %v", got)
	}
	if ev := rs.Evidence(); len(ev) != 1 || base(ev[0].Pos) != "service-ingress-nginx.json:1 (Service ingress-nginx/ingress-nginx-controller)" {
		t.Errorf("evidence %v", ev)
	}
	if rs := x.Of(vip, 8443); len(rs) != 0 {
		t.Errorf("another port: %v", rs)
	}
	// The ClusterIP is no address on a link.
	cip := netip.MustParseAddr("10.233.14.87")
	if rs := x.Of(cip, 0); len(rs) != 2 || !rs.Live() || rs.OnLink() || rs.VIP() {
		t.Errorf("ClusterIP %s: %v, live %v, on a link %v, VIP %v", cip, rs, rs.Live(), rs.OnLink(), rs.VIP())
	}
}

// The control plane's Pods run on the host network: their IP is the
// Node's, which is on a link but names no port that should answer.
func TestRolesOfPodsAndNodes(t *testing.T) {
	fs := open(t, "fixtures/incidents/probe-restart-loop/nodes.json", "fixtures/incidents/probe-restart-loop/pods-kube-system.json")
	rs := facts.AddrRoles.Get(fs).Of(netip.MustParseAddr("10.0.0.11"), 2379)
	var kinds []facts.RoleKind
	for _, r := range rs {
		kinds = append(kinds, r.Kind)
	}
	if !slices.Contains(kinds, facts.RolePodIP) || !slices.Contains(kinds, facts.RoleNodeAddress) {
		t.Fatalf("roles %v", rs)
	}
	if rs.Live() || !rs.OnLink() || rs.NamePort() || rs.VIP() {
		t.Errorf("live %v, on a link %v, names its port %v, VIP %v", rs.Live(), rs.OnLink(), rs.NamePort(), rs.VIP())
	}
	pods := facts.Roles{{Kind: facts.RolePodIP}, {Kind: facts.RoleNotReadyEndpoint, Port: 80}}
	if pods.Live() || pods.OnLink() || !pods.NamePort() {
		t.Errorf("a Pod and a not-ready endpoint: live %v, on a link %v", pods.Live(), pods.OnLink())
	}
}

func TestNodePortRange(t *testing.T) {
	np := facts.NodePortRange.Get(open(t, "fixtures/incidents/ephemeral-nodeport/kube-apiserver.yaml"))
	if np.Range.String() != "20000-40000" || np.Source() != "kube-apiserver --service-node-port-range" || np.Problem != "" {
		t.Errorf("flag: %+v from %s", np, np.Source())
	}
	if ev := np.Evidence(); len(ev) != 1 || base(ev[0].Pos) != "kube-apiserver.yaml:41 (Pod kube-system/kube-apiserver)" || ev[0].Note != "--service-node-port-range=20000-40000" {
		t.Errorf("evidence %v", ev)
	}
	np = facts.NodePortRange.Get(open(t, "fixtures/incidents/ephemeral-nodeport/sysctl.txt"))
	if np.Range != facts.DefaultNodePortRange || np.Source() != "kube-apiserver default" || np.Evidence() != nil {
		t.Errorf("default: %+v", np)
	}
}

func TestPortOwners(t *testing.T) {
	fs := open(t, "fixtures/incidents/ephemeral-nodeport/ipvsadm.txt", "fixtures/incidents/ephemeral-nodeport/services.json")
	owners := facts.PortOwners.Get(fs).On("")
	var what []string
	for _, o := range owners[36704] {
		what = append(what, fmt.Sprintf("%s ipvs=%v %s", o.What, o.IPVS, base(o.Pos)))
	}
	want := []string{
		"IPVS virtual service TCP 10.10.85.235:36704 ipvs=true ipvsadm.txt:10",
		"IPVS virtual service TCP 127.0.0.1:36704 ipvs=true ipvsadm.txt:33",
		"IPVS virtual service TCP 169.254.20.10:36704 ipvs=true ipvsadm.txt:41",
		"NodePort 36704/TCP of Service kube-system/kubernetes-dashboard ipvs=false services.json:4 (Service kube-system/kubernetes-dashboard)",
	}
	if !slices.Equal(what, want) {
		t.Errorf("owners of 36704:\n got %q\nwant %q", what, want)
	}
	// IPVS entries belong to their node; NodePorts to every node.
	s := &model.Snapshot{IPVS: []model.IPVSService{
		{Node: "node1", Proto: "TCP", Addr: netip.MustParseAddrPort("10.0.0.1:30080")},
		{Node: "node2", Proto: "TCP", Addr: netip.MustParseAddrPort("10.0.0.2:30081")},
		{Proto: "FWM", FWMark: 7},
	}}
	o := facts.PortOwners.Get(analyzer.NewFactSet(s))
	if on := o.On("node1"); len(on) != 1 || len(on[30080]) != 1 {
		t.Errorf("node1: %v", on)
	}
	if on := o.On(""); len(on) != 2 {
		t.Errorf("every node: %v", on)
	}
}

func TestLocalPorts(t *testing.T) {
	l := facts.LocalPorts.Get(open(t, "fixtures/incidents/ephemeral-nodeport/sysctl.txt"))
	if got := l.Nodes(); !slices.Equal(got, []string{""}) {
		t.Errorf("nodes %q", got)
	}
	p := l.Of("")
	if !p.HasRange || p.Range.String() != "1024-65000" || p.RangeErr != nil || !p.HasReserved || p.Reserved.Value != "" ||
		len(p.ReservedRanges) != 0 || base(p.PortRange.Pos) != "sysctl.txt:1" {
		t.Errorf("ports %+v", p)
	}
	// A node's own value wins over one of no node in particular given
	// before it; node "" takes the last of any node, as
	// model.Snapshot.Sysctl does.
	sc := func(node, name, value string) model.Sysctl { return model.Sysctl{Node: node, Name: name, Value: value} }
	s := &model.Snapshot{Sysctls: []model.Sysctl{
		sc("", "net.ipv4.ip_local_port_range", "32768 60999"),
		sc("node1", "net.ipv4.ip_local_port_range", "1024 65000"),
		sc("node2", "net.ipv4.ip_local_port_range", "bad"),
		sc("node2", "net.ipv4.ip_local_reserved_ports", "30000-32767,x"),
	}}
	l = facts.LocalPorts.Get(analyzer.NewFactSet(s))
	if got := l.Nodes(); !slices.Equal(got, []string{"", "node1", "node2"}) {
		t.Errorf("nodes %q", got)
	}
	for node, want := range map[string]string{"node1": "1024-65000", "node3": "32768-60999", "": "0-0"} {
		if got := l.Of(node).Range.String(); got != want {
			t.Errorf("%q: range %s, want %s", node, got, want)
		}
	}
	p = l.Of("node2")
	if p.RangeErr == nil || p.Range != (model.PortRange{}) || fmt.Sprint(p.ReservedRanges) != "[30000-32767]" {
		t.Errorf("node2: %+v", p)
	}
	if l.Of("node1").HasReserved || !l.Of("node2").HasReserved {
		t.Errorf("reserved ports seen on node1, or not on node2")
	}
}

func TestServiceEndpoints(t *testing.T) {
	x := facts.ServiceEndpoints.Get(open(t, "fixtures/incidents/stale-dnat/endpoints-kube-dns.json"))
	set, pos, found := x.Of("kube-system", "kube-dns", "dns-tcp")
	if !found || set.Count != 3 || fmt.Sprint(set.Addrs) != "[10.244.1.11:53 10.244.1.12:53 10.244.1.13:53]" ||
		!set.IPs["10.244.1.12"] || base(pos) != "endpoints-kube-dns.json:1 (Endpoints kube-system/kube-dns)" {
		t.Errorf("dns-tcp: %+v at %s, found %v", set, pos, found)
	}
	// A port of another name is not one of the subset's three.
	if set, _, found := x.Of("kube-system", "kube-dns", "grpc"); !found || set.Count != 0 {
		t.Errorf("grpc: %+v, found %v", set, found)
	}
	if _, _, found := x.Of("default", "web", ""); found {
		t.Error("found endpoints of a Service the bundle does not hold")
	}
}

func TestKubeProxyLogs(t *testing.T) {
	fs := open(t, "fixtures/incidents/stale-dnat/kube-proxy.log")
	k := facts.KubeProxyLogs.Get(fs)
	var kinds []string
	for _, e := range k.ListErrors {
		kinds = append(kinds, e.Plural()+"@"+base(e.Event.Pos))
	}
	if len(kinds) < 4 || strings.Join(kinds[:4], " ") != "EndpointSlices@kube-proxy.log:4 Services@kube-proxy.log:5 EndpointSlices@kube-proxy.log:6 Services@kube-proxy.log:7" {
		t.Errorf("list errors %v", kinds)
	}
	logs := fs.Snapshot().Logs
	for i := range logs {
		if !k.Own(i) {
			t.Errorf("line %s is kube-proxy's own log, by its file name", logs[i].Pos)
		}
	}
	if k.Own(len(logs)) || k.Own(-1) {
		t.Error("Own out of range")
	}
	if got := (facts.ListError{Kind: "Endpoints"}).Plural(); got != "Endpoints" {
		t.Errorf("plural of Endpoints: %s", got)
	}
}

func TestAppErrors(t *testing.T) {
	fs := open(t, "parse/testdata/logs/nginx-error.log")
	l := facts.AppErrors.Get(fs)
	dst := netip.MustParseAddr("10.213.0.99")
	n, ev := l.For(dst, "host-unreachable")
	if n != 1 || len(ev) != 1 || base(ev[0].Pos) != "nginx-error.log:3" || ev[0].Note != "nginx: no route to host to 10.213.0.99" {
		t.Fatalf("no route to host: %d %v", n, ev)
	}
	if n, _ := l.For(dst, "port-unreachable"); n != 0 {
		t.Errorf("connection refused to %s: %d", dst, n)
	}
	if n, _ := l.For(netip.MustParseAddr("127.0.0.1"), "port-unreachable"); n != 1 {
		t.Errorf("connection refused to 127.0.0.1: %d", n)
	}
	if n, _ := l.For(dst, "frag-needed"); n != 0 {
		t.Errorf("frag-needed: %d", n)
	}
}

func TestLBControllers(t *testing.T) {
	// kubespray's kube-vip settings of seed 003: services mode off.
	c := facts.LBControllers.Get(open(t, "fixtures/seeds/003-lb-controller-conflict/kube-vip-settings.yml"))
	if c.MetalLB || c.KubeVIPServices || len(c.Evidence) != 0 {
		t.Errorf("services mode off: %+v", c)
	}
	dir := t.TempDir()
	vars := "metallb_enabled: true\nmetallb_speaker_enabled: true\nkube_vip_enabled: true\nkube_vip_services_enabled: true\n"
	if err := os.WriteFile(filepath.Join(dir, "addons.yml"), []byte(vars), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, warns, err := parse.Open(context.Background(), dir, nil)
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	c = facts.LBControllers.Get(analyzer.NewFactSet(snap))
	var ev []string
	for _, e := range c.Evidence {
		ev = append(ev, base(e.Pos)+" "+e.Note)
	}
	want := []string{"addons.yml:1 kubespray deploys MetalLB: metallb_enabled: true",
		"addons.yml:4 kubespray turns kube-vip's services mode on: kube_vip_services_enabled: true"}
	if !c.MetalLB || !c.KubeVIPServices || !slices.Equal(ev, want) {
		t.Errorf("controllers %+v\n evidence %q\n want %q", c, ev, want)
	}
}

// kube-proxy's list failures are read in the types every version names:
// v1 and v1beta1, the "api" types before 1.7 and the internal "core" ones;
// other resources are not kube-proxy's.
func TestKubeProxyLogsOlderTypes(t *testing.T) {
	snap := &model.Snapshot{}
	for i, msg := range []string{
		`pkg/proxy/config/api.go:49: Failed to list *api.Endpoints: Get http://10.20.1.241:8080/api/v1/endpoints?resourceVersion=0: dial tcp 10.20.1.241:8080: getsockopt: connection refused`,
		`pkg/proxy/config/api.go:46: Failed to list *api.Service: Get http://10.20.1.241:8080/api/v1/services?resourceVersion=0: dial tcp 10.20.1.241:8080: getsockopt: connection refused`,
		`k8s.io/kubernetes/pkg/client/informers/informers_generated/internalversion/factory.go:85: Failed to list *core.Endpoints: Get https://127.0.0.1:6443/api/v1/endpoints?limit=500&resourceVersion=0: dial tcp 127.0.0.1:6443: connect: connection refused`,
		`k8s.io/client-go/informers/factory.go:134: Failed to watch *v1beta1.EndpointSlice: failed to list *v1beta1.EndpointSlice: the server could not find the requested resource`,
		`pkg/proxy/config/api.go:52: Failed to list *api.Pod: Get http://10.20.1.241:8080/api/v1/pods: dial tcp 10.20.1.241:8080: getsockopt: connection refused`,
	} {
		snap.Logs = append(snap.Logs, model.LogEvent{Source: "kube-proxy", Level: "E", Message: msg, Pos: model.Pos{File: "kube-proxy.log", Line: i + 1}})
	}
	var got []string
	for _, e := range facts.KubeProxyLogs.Get(analyzer.NewFactSet(snap)).ListErrors {
		got = append(got, e.Kind+"@"+base(e.Event.Pos))
	}
	if want := "Endpoints@kube-proxy.log:1 Service@kube-proxy.log:2 Endpoints@kube-proxy.log:3 EndpointSlice@kube-proxy.log:4"; strings.Join(got, " ") != want {
		t.Errorf("list errors %v, want %s", got, want)
	}
}
