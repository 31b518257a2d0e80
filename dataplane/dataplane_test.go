package dataplane_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/netfilter"
)

func build(t *testing.T, rel string) []dataplane.ServicePort {
	t.Helper()
	snap, _, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), rel), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dataplane.Build(snap)
}

// Seed 000: kubernetes:https spread over three apiservers, 1/3 each by
// kube-proxy's 0.333/0.5/1.0 chain.
func TestSeed000Probabilities(t *testing.T) {
	sps := build(t, "fixtures/seeds/000-apiserver-affinity/iptables-nat.txt")
	if len(sps) != 1 {
		t.Fatalf("%d service ports: %+v", len(sps), sps)
	}
	sp := sps[0]
	if sp.Service != "default/kubernetes:https" || fmt.Sprint(sp.Frontends) != "[10.43.0.1:443]" || len(sp.Backends) != 3 {
		t.Fatalf("%+v", sp)
	}
	for i, want := range []string{"10.10.1.144:6443", "10.150.79.150:6443", "10.150.79.151:6443"} {
		b := sp.Backends[i]
		if b.Addr.String() != want || math.Abs(b.Probability-1.0/3) > 1e-4 { // the listing prints 0.33333
			t.Errorf("backend %d: %s %.6f, want %s 1/3", i, b.Addr, b.Probability, want)
		}
	}
}

// Seed 004: 65 endpoint chains at 1/65 each; the DNAT targets show as to::0,
// so the addresses come from the chains' masquerade rules where listed.
func TestSeed004Probabilities(t *testing.T) {
	sps := build(t, "fixtures/seeds/004-stale-dnat/iptables-nat-kube-dns.txt")
	var sp *dataplane.ServicePort
	for i := range sps {
		if sps[i].Service == "kube-system/kube-dns:dns-tcp" {
			sp = &sps[i]
		}
	}
	if sp == nil || len(sp.Backends) != 65 {
		t.Fatalf("kube-dns:dns-tcp: %+v", sps)
	}
	sum := 0.0
	for _, b := range sp.Backends {
		sum += b.Probability
		if math.Abs(b.Probability-1.0/65) > 1e-6 {
			t.Errorf("%s: %.6f, want 1/65", b.Chain, b.Probability)
		}
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("probabilities add up to %f", sum)
	}
}

// The stale-DNAT incident's real iptables-save and iptables -nvL of one
// node: the same four backends, a quarter each, whichever dump is read.
func TestIncidentBothForms(t *testing.T) {
	for _, f := range []string{"iptables-save.txt", "iptables-nat-nvL.txt"} {
		sps := build(t, "fixtures/incidents/stale-dnat/"+f)
		if len(sps) != 1 || len(sps[0].Backends) != 4 {
			t.Fatalf("%s: %+v", f, sps)
		}
		var got []string
		for _, b := range sps[0].Backends {
			got = append(got, b.Describe())
		}
		if fmt.Sprint(got) != "[10.244.1.11:53 (25.0%) 10.244.1.12:53 (25.0%) 10.244.2.7:53 (25.0%) 10.244.1.13:53 (25.0%)]" {
			t.Errorf("%s: %v", f, got)
		}
	}
}

func traceOf(t *testing.T, rel string, probe dataplane.Probe) *dataplane.Trace {
	t.Helper()
	snap, _, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), rel), nil)
	if err != nil || len(snap.Netfilter) == 0 {
		t.Fatalf("%s: %v", rel, err)
	}
	tr, err := dataplane.TraceNAT(snap.Netfilter[0], probe)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func destinations(tr *dataplane.Trace) string {
	var out []string
	for _, d := range tr.Destinations {
		out = append(out, fmt.Sprintf("%s %s %s", d.Addr, dataplane.Percent(d.Probability), d.Pos))
	}
	return fmt.Sprint(out)
}

func TestTrace(t *testing.T) {
	tr := traceOf(t, "fixtures/incidents/stale-dnat/iptables-save.txt",
		dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.0.10:53"), Proto: "tcp", Output: true})
	want := "[10.244.1.11:53 25.0% iptables-save.txt:22 10.244.1.12:53 25.0% iptables-save.txt:24 " +
		"10.244.2.7:53 25.0% iptables-save.txt:26 10.244.1.13:53 25.0% iptables-save.txt:28]"
	if got := strings.ReplaceAll(destinations(tr), filepath.Join(testutil.Root(), "fixtures/incidents/stale-dnat")+"/", ""); got != want {
		t.Errorf("destinations\n got %s\nwant %s", got, want)
	}
	if tr.Hook != "OUTPUT" || len(tr.Steps) != 12 || tr.Steps[0].Rule.Pos.Line != 15 {
		t.Errorf("hook %s, %d steps, first at %v", tr.Hook, len(tr.Steps), tr.Steps[0].Rule.Pos)
	}
	// Another port of the same address is not a Service port: not translated.
	tr = traceOf(t, "fixtures/incidents/stale-dnat/iptables-save.txt",
		dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.0.10:80"), Proto: "tcp", Output: true})
	if len(tr.Destinations) != 1 || tr.Destinations[0].Translated || tr.Destinations[0].Probability != 1 {
		t.Errorf("port 80: %s", destinations(tr))
	}
	// Seed 004: 65 endpoint chains; two are listed (their DNAT shows to::0).
	tr = traceOf(t, "fixtures/seeds/004-stale-dnat/iptables-nat-kube-dns.txt",
		dataplane.Probe{Dst: netip.MustParseAddrPort("10.178.64.10:53"), Proto: "tcp"})
	sum, named := 0.0, 0
	for _, d := range tr.Destinations {
		sum += d.Probability
		if strings.HasSuffix(d.Addr, "(the listing shows to::0)") {
			named++
		}
	}
	if len(tr.Destinations) != 65 || math.Abs(sum-1) > 1e-6 || named != 2 {
		t.Errorf("seed 004: %d destinations, sum %f, %d named: %s", len(tr.Destinations), sum, named, destinations(tr))
	}
}

// IPVS virtual services become service ports too, named from the Services
// by ClusterIP or NodePort, their real servers weighted.
func TestIPVS(t *testing.T) {
	sps := build(t, "fixtures/incidents/ephemeral-nodeport")
	got := map[string]string{}
	for _, sp := range sps {
		if sp.Mode != "ipvs" {
			continue
		}
		var bs []string
		for _, b := range sp.Backends {
			bs = append(bs, b.Describe())
		}
		got[sp.Frontends[0]] = fmt.Sprintf("%s %v", sp.Service, bs)
	}
	for front, want := range map[string]string{
		"10.23.0.1:443":      "default/kubernetes:https [10.10.85.231:6443 (33.3%) 10.10.85.232:6443 (33.3%) 10.10.85.233:6443 (33.3%)]",
		"10.10.85.235:36704": "kube-system/kubernetes-dashboard [10.23.78.7:8443 (100.0%)]",
		"127.0.0.1:32080":    "kube-system/traefik-ingress:http [10.23.77.141:80 (50.0%) 10.23.78.19:80 (50.0%)]",
	} {
		if got[front] != want {
			t.Errorf("%s: %q, want %q", front, got[front], want)
		}
	}
	if len(got) != 14 { // 15 virtual services; TCP and UDP 10.23.0.10:53 share a frontend
		t.Errorf("%d IPVS frontends, want 14", len(got))
	}
}

// backendsOf lists each service port as "service proto [frontends] ->
// backend (share) at line, ...".
func backendsOf(sps []dataplane.ServicePort) []string {
	var out []string
	for _, sp := range sps {
		var bs []string
		for _, b := range sp.Backends {
			bs = append(bs, fmt.Sprintf("%s at %d", b.Describe(), b.Pos.Line))
		}
		out = append(out, fmt.Sprintf("%s %s %s %v -> %s", sp.Mode, sp.Service, sp.Proto, sp.Frontends, strings.Join(bs, ", ")))
	}
	return out
}

// kube-proxy's nftables mode: the service-ips map's elements are the
// frontends, numgen random mod N the split (1/N each), the endpoint
// chains' dnat the backends.
func TestNFTBackends(t *testing.T) {
	for _, f := range []string{"kube-proxy-list-ruleset.txt", "kube-proxy-list-ruleset-a.txt"} {
		sps := build(t, "parse/testdata/nft/"+f)
		want := []string{
			"nftables kube-system/kube-dns:dns-tcp tcp [10.96.0.10:53] -> 10.244.0.2:53 (33.3%) at 120, 10.244.0.3:53 (33.3%) at 125, 10.244.1.4:53 (33.3%) at 130",
			"nftables default/kubernetes:https tcp [10.96.0.1:443] -> 172.18.0.2:6443 (100.0%) at 140",
		}
		if got := backendsOf(sps); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %q\nwant %q", f, got, want)
		}
		if len(sps) != 2 {
			continue
		}
		dns := sps[0]
		if dns.Chain != "service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp" || dns.Pos.Line != 23 ||
			dns.Backends[1].Chain != "endpoint-IQ3D4WIZ-kube-system/kube-dns/tcp/dns-tcp__10.244.0.3/53" {
			t.Errorf("%s: kube-dns chain %s at %d, backend chain %s", f, dns.Chain, dns.Pos.Line, dns.Backends[1].Chain)
		}
		for _, b := range dns.Backends {
			if math.Abs(b.Probability-1.0/3) > 1e-12 {
				t.Errorf("%s: %s %v, want 1/3", f, b.Address, b.Probability)
			}
		}
	}
	// A NodePort: the service-nodeports element goes to the external
	// chain, which goes to the Service chain.
	sps := build(t, "dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt")
	want := []string{"nftables default/web:http tcp [10.96.100.10:80 NodePort 30080] -> 10.244.1.5:8080 (50.0%) at 126, 10.244.2.6:8080 (50.0%) at 131"}
	if got := backendsOf(sps); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("nodeport:\n got %q\nwant %q", got, want)
	}
}

// The public k3s listing (nft list table ip kube-proxy): nine Service
// ports named from the chain names alone (no comments), hellopod-np-svc
// spread over 9 endpoints by numgen random mod 9 and reachable on NodePort
// 30000; the Service without endpoints has no service port (it is
// rejected by the filter chains, see TestNFTTraceCorpus).
func TestNFTCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "nft")
	snap, _, err := parse.Open(context.Background(), filepath.Join(dir, "unknown-repo_k3s_kube-proxy-nftables-mode_nft-list-table.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sps := dataplane.Build(snap)
	want := []string{
		"nftables kube-system/kube-dns:dns-tcp tcp [10.43.0.10:53] -> 10.42.0.171:53 (100.0%) at 203",
		"nftables kube-system/kube-dns:dns udp [10.43.0.10:53] -> 10.42.0.171:53 (100.0%) at 233",
		"nftables riset/hellopod-np-svc tcp [10.43.195.72:8000 NodePort 30000] -> 10.42.2.218:8080 (11.1%) at 253, " +
			"10.42.4.201:8080 (11.1%) at 148, 10.42.4.202:8080 (11.1%) at 153, 10.42.4.203:8080 (11.1%) at 158, " +
			"10.42.4.204:8080 (11.1%) at 163, 10.42.4.205:8080 (11.1%) at 168, 10.42.4.206:8080 (11.1%) at 173, " +
			"10.42.4.207:8080 (11.1%) at 178, 10.42.5.164:8080 (11.1%) at 258",
		"nftables riset/latency-extender-svc:http tcp [10.43.34.64:3001] -> 10.42.0.174:3001 (100.0%) at 183",
		"nftables default/kubernetes:https tcp [10.43.0.1:443] -> 10.34.4.142:6443 (100.0%) at 193",
		"nftables kube-system/metrics-server:https tcp [10.43.10.165:443] -> 10.42.0.170:10250 (100.0%) at 243",
		"nftables kube-system/kube-dns:metrics tcp [10.43.0.10:9153] -> 10.42.0.171:9153 (100.0%) at 213",
		"nftables riset/opentelemetry-collector:otlp tcp [10.43.22.243:4317] -> 10.42.0.181:4317 (100.0%) at 263",
		"nftables riset/opentelemetry-collector:otlp-http tcp [10.43.22.243:4318] -> 10.42.0.181:4318 (100.0%) at 268",
	}
	got := backendsOf(sps)
	if len(got) != len(want) {
		t.Fatalf("%d service ports, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("service port %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	sum := 0.0
	for _, b := range sps[2].Backends {
		sum += b.Probability
		if math.Abs(b.Probability-1.0/9) > 1e-12 {
			t.Errorf("%s: %v, want 1/9", b.Address, b.Probability)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("hellopod-np-svc shares add up to %v", sum)
	}
}

// stepsOf lists a trace's steps as "line chain: note".
func stepsOf(tr *dataplane.Trace) []string {
	var out []string
	for _, s := range tr.Steps {
		out = append(out, fmt.Sprintf("%d %s %s: %s", s.Rule.Pos.Line, dataplane.Percent(s.Probability), s.Chain, s.Note))
	}
	return out
}

func nftDestinations(tr *dataplane.Trace) []string {
	var out []string
	for _, d := range tr.Destinations {
		out = append(out, fmt.Sprintf("%s %s %v %s line %d via %s", d.Addr, dataplane.Percent(d.Probability), d.Translated, d.Verdict,
			d.Pos.Line, strings.Join(d.Via, " > ")))
	}
	return out
}

func TestNFTTrace(t *testing.T) {
	const nodeport = "dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt"
	const web = "service-HVFWP5L3-default/web/tcp/http"
	const ep1 = "endpoint-4CWX3ECR-default/web/tcp/http__10.244.1.5/8080"
	const ep2 = "endpoint-DUVQ5S7B-default/web/tcp/http__10.244.2.6/8080"
	for _, tc := range []struct {
		name  string
		probe dataplane.Probe
		hook  string
		steps []string
		dests []string
	}{{
		name:  "ClusterIP from a pod",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.100.10:80"), Src: netip.MustParseAddr("10.244.1.9"), Proto: "tcp"},
		hook:  "prerouting > forward",
		steps: []string{
			"96 100.0% nat-prerouting: jump to services",
			"30 100.0% services: goto " + web,
			"136 50.0% " + web + ": statistic 0.5: goto " + ep1,
			"126 50.0% " + ep1 + ": DNAT to 10.244.1.5:8080",
			"136 50.0% " + web + ": statistic 1: goto " + ep2,
			"131 50.0% " + ep2 + ": DNAT to 10.244.2.6:8080",
		},
		dests: []string{
			"10.244.1.5:8080 50.0% true  line 126 via nat-prerouting > services > " + web + " > " + ep1,
			"10.244.2.6:8080 50.0% true  line 131 via nat-prerouting > services > " + web + " > " + ep2,
		},
	}, {
		name:  "NodePort from the node",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("172.18.0.2:30080"), Proto: "tcp", Output: true},
		hook:  "output",
		steps: []string{
			"101 100.0% nat-output: jump to services",
			"36 100.0% services: goto external-HVFWP5L3-default/web/tcp/http",
			"140 100.0% external-HVFWP5L3-default/web/tcp/http: jump to mark-for-masquerade",
			"110 100.0% mark-for-masquerade: MARK 0x4000/0x4000",
			"141 100.0% external-HVFWP5L3-default/web/tcp/http: goto " + web,
			"136 50.0% " + web + ": statistic 0.5: goto " + ep1,
			"126 50.0% " + ep1 + ": DNAT to 10.244.1.5:8080",
			"136 50.0% " + web + ": statistic 1: goto " + ep2,
			"131 50.0% " + ep2 + ": DNAT to 10.244.2.6:8080",
		},
		dests: []string{
			"10.244.1.5:8080 50.0% true  line 126 via nat-output > services > external-HVFWP5L3-default/web/tcp/http > " + web + " > " + ep1,
			"10.244.2.6:8080 50.0% true  line 131 via nat-output > services > external-HVFWP5L3-default/web/tcp/http > " + web + " > " + ep2,
		},
	}, {
		name:  "ClusterIP without endpoints",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.200.20:80"), Proto: "tcp"},
		hook:  "prerouting > forward",
		steps: []string{
			"96 100.0% nat-prerouting: jump to services",
			"57 100.0% filter-forward: jump to service-endpoints-check",
			"18 100.0% service-endpoints-check: goto reject-chain",
			"78 100.0% reject-chain: REJECT: the connection is refused",
		},
		dests: []string{"10.96.200.20:80 100.0% false REJECT line 78 via filter-forward > service-endpoints-check > reject-chain"},
	}, {
		name:  "NodePort without endpoints, from the node",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("172.18.0.2:30090"), Proto: "tcp", Output: true},
		hook:  "output > input",
		steps: []string{
			"101 100.0% nat-output: jump to services",
			"51 100.0% filter-input: jump to nodeport-endpoints-check",
			"24 100.0% nodeport-endpoints-check: goto reject-chain",
			"78 100.0% reject-chain: REJECT: the connection is refused",
		},
		dests: []string{"172.18.0.2:30090 100.0% false REJECT line 78 via filter-input > nodeport-endpoints-check > reject-chain"},
	}, {
		name:  "NodePort without endpoints, from elsewhere",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("172.18.0.2:30090"), Proto: "tcp"},
		hook:  "prerouting > input",
		steps: []string{
			"96 100.0% nat-prerouting: jump to services",
			"51 100.0% filter-input: jump to nodeport-endpoints-check",
			"24 100.0% nodeport-endpoints-check: goto reject-chain",
			"78 100.0% reject-chain: REJECT: the connection is refused",
		},
		dests: []string{"172.18.0.2:30090 100.0% false REJECT line 78 via filter-input > nodeport-endpoints-check > reject-chain"},
	}, {
		name:  "another port of a ClusterIP",
		probe: dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.100.10:81"), Proto: "tcp", Output: true},
		hook:  "output",
		steps: []string{
			"101 100.0% nat-output: jump to services",
			"69 100.0% filter-output-post-dnat: jump to cluster-ips-check",
			"90 100.0% cluster-ips-check: REJECT: the connection is refused",
		},
		dests: []string{"10.96.100.10:81 100.0% false REJECT line 90 via filter-output-post-dnat > cluster-ips-check"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := traceOf(t, nodeport, tc.probe)
			if tr.Hook != tc.hook || tr.Format != "nft" {
				t.Errorf("hook %q format %q, want %q nft", tr.Hook, tr.Format, tc.hook)
			}
			if got := stepsOf(tr); fmt.Sprint(got) != fmt.Sprint(tc.steps) {
				t.Errorf("steps\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.steps, "\n     "))
			}
			if got := nftDestinations(tr); fmt.Sprint(got) != fmt.Sprint(tc.dests) {
				t.Errorf("destinations\n got %q\nwant %q", got, tc.dests)
			}
		})
	}
}

// The k3s listing: a NodePort over nine endpoints, and the Service
// without endpoints rejected.
func TestNFTTraceCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "nft")
	rel, err := filepath.Rel(testutil.Root(), filepath.Join(dir, "unknown-repo_k3s_kube-proxy-nftables-mode_nft-list-table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tr := traceOf(t, rel, dataplane.Probe{Dst: netip.MustParseAddrPort("10.34.4.246:30000"), Proto: "tcp"})
	if len(tr.Destinations) != 9 {
		t.Fatalf("%d destinations: %q", len(tr.Destinations), nftDestinations(tr))
	}
	for i, want := range []string{"10.42.2.218:8080", "10.42.4.201:8080", "10.42.4.202:8080", "10.42.4.203:8080", "10.42.4.204:8080",
		"10.42.4.205:8080", "10.42.4.206:8080", "10.42.4.207:8080", "10.42.5.164:8080"} {
		d := tr.Destinations[i]
		if d.Addr != want || !d.Translated || math.Abs(d.Probability-1.0/9) > 1e-12 {
			t.Errorf("destination %d: %s %v, want %s 1/9", i, d.Addr, d.Probability, want)
		}
	}
	if got := stepsOf(tr)[1]; got != "31 100.0% services: goto external-P6J77WGM-riset/hellopod-np-svc/tcp/" {
		t.Errorf("NodePort element step %q", got)
	}
	for _, out := range []bool{false, true} {
		tr = traceOf(t, rel, dataplane.Probe{Dst: netip.MustParseAddrPort("10.43.21.102:4317"), Proto: "tcp", Output: out})
		if got := fmt.Sprint(nftDestinations(tr)); !strings.HasPrefix(got, "[10.43.21.102:4317 100.0% false REJECT line 143 via ") {
			t.Errorf("no-endpoint service (output %v): %s", out, got)
		}
	}
}

// A goto does not come back: what falls through the chain it went to
// leaves the calling chain too, while the connections the goto rule did
// not take go on with the calling chain's next rule.
func TestTraceGoto(t *testing.T) {
	dir := t.TempDir()
	in := "*nat\n:PREROUTING ACCEPT [0:0]\n:A - [0:0]\n:B - [0:0]\n" +
		"-A PREROUTING -j A\n" +
		"-A PREROUTING -p tcp -j DNAT --to-destination 10.0.0.3:80\n" +
		"-A A -m statistic --mode random --probability 0.25 -g B\n" +
		"-A A -p tcp -j DNAT --to-destination 10.0.0.1:80\n" +
		"-A B -p udp -j DNAT --to-destination 10.0.0.2:80\n" +
		"COMMIT\n"
	if err := os.WriteFile(filepath.Join(dir, "iptables-save.txt"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, err := parse.Open(context.Background(), filepath.Join(dir, "iptables-save.txt"), nil)
	if err != nil || len(snap.Netfilter) != 1 {
		t.Fatalf("%v", err)
	}
	tr, err := dataplane.TraceNAT(snap.Netfilter[0], dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.0.1:80"), Proto: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1:80 75.0% true  line 8 via PREROUTING > A", "10.0.0.3:80 25.0% true  line 6 via PREROUTING"}
	if got := nftDestinations(tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("destinations\n got %q\nwant %q", got, want)
	}
}

// Session affinity (a source set the client is not known to be in), a
// NodePort caught by `fib daddr type local`, and a set the dump does not
// list.
func TestNFTTraceAffinityFib(t *testing.T) {
	in := `table ip kube-proxy {
	set affinity-X {
		type ipv4_addr
		flags dynamic,timeout
		timeout 3h
	}
	map service-nodeports {
		type inet_proto . inet_service : verdict
		elements = { tcp . 30001 : goto service-S-default/a/tcp/p }
	}
	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services
	}
	chain services {
		ip daddr @missing-set drop
		fib daddr type local meta l4proto . th dport vmap @service-nodeports
	}
	chain service-S-default/a/tcp/p {
		ip saddr @affinity-X goto endpoint-E2-default/a/tcp/p__10.0.0.2/80
		numgen random mod 2 vmap { 0 : goto endpoint-E1-default/a/tcp/p__10.0.0.1/80, 1 : goto endpoint-E2-default/a/tcp/p__10.0.0.2/80 }
	}
	chain endpoint-E1-default/a/tcp/p__10.0.0.1/80 {
		dnat to 10.0.0.1:80
	}
	chain endpoint-E2-default/a/tcp/p__10.0.0.2/80 {
		dnat to 10.0.0.2:80
	}
}
`
	sets, err := netfilter.NFT(strings.NewReader(in), "a.nft")
	if err != nil || len(sets) != 1 {
		t.Fatalf("%d rulesets: %v", len(sets), err)
	}
	tr, err := dataplane.TraceNAT(sets[0], dataplane.Probe{Dst: netip.MustParseAddrPort("192.168.1.5:30001"), Proto: "tcp", Local: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1:80 50.0% true  line 24 via nat-prerouting > services > service-S-default/a/tcp/p > endpoint-E1-default/a/tcp/p__10.0.0.1/80",
		"10.0.0.2:80 50.0% true  line 27 via nat-prerouting > services > service-S-default/a/tcp/p > endpoint-E2-default/a/tcp/p__10.0.0.2/80"}
	if got := nftDestinations(tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("destinations\n got %q\nwant %q", got, want)
	}
	wantU := "[set @missing-set is not in the dump: taken as not matching source set @affinity-X taken as not holding the client]"
	if fmt.Sprint(tr.Unknown) != wantU {
		t.Errorf("assumed %q, want %q", tr.Unknown, wantU)
	}
	// Not local: the fib rule does not match, nothing is translated.
	tr, _ = dataplane.TraceNAT(sets[0], dataplane.Probe{Dst: netip.MustParseAddrPort("192.168.1.5:30001"), Proto: "tcp"})
	if got := nftDestinations(tr); fmt.Sprint(got) != "[192.168.1.5:30001 100.0% false  line 11 via nat-prerouting]" {
		t.Errorf("not local: %q", got)
	}
	sps := dataplane.Build(&model.Snapshot{Netfilter: sets})
	if got := backendsOf(sps); fmt.Sprint(got) != "[nftables default/a:p tcp [NodePort 30001] -> 10.0.0.1:80 (50.0%) at 24, 10.0.0.2:80 (50.0%) at 27]" {
		t.Errorf("service ports %q", got)
	}
}

// ClientIP session affinity: the recent check for returning clients comes
// before the statistic rules and takes no share of new connections.
func TestAffinityBackends(t *testing.T) {
	dir := t.TempDir()
	in := "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-A - [0:0]\n:KUBE-SEP-1 - [0:0]\n:KUBE-SEP-2 - [0:0]\n" +
		"-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment \"default/a:p cluster IP\" -m tcp --dport 80 -j KUBE-SVC-A\n" +
		"-A KUBE-SVC-A -m comment --comment \"default/a:p -> 10.0.0.1:80\" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-1 --mask 255.255.255.255 --rsource -j KUBE-SEP-1\n" +
		"-A KUBE-SVC-A -m comment --comment \"default/a:p -> 10.0.0.2:80\" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-2 --mask 255.255.255.255 --rsource -j KUBE-SEP-2\n" +
		"-A KUBE-SVC-A -m comment --comment \"default/a:p -> 10.0.0.1:80\" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-1\n" +
		"-A KUBE-SVC-A -m comment --comment \"default/a:p -> 10.0.0.2:80\" -j KUBE-SEP-2\n" +
		"-A KUBE-SEP-1 -p tcp -m comment --comment \"default/a:p\" -m recent --set --name KUBE-SEP-1 --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.0.0.1:80\n" +
		"-A KUBE-SEP-2 -p tcp -m comment --comment \"default/a:p\" -m recent --set --name KUBE-SEP-2 --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.0.0.2:80\n" +
		"COMMIT\n"
	if err := os.WriteFile(filepath.Join(dir, "iptables-save.txt"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, err := parse.Open(context.Background(), filepath.Join(dir, "iptables-save.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "[iptables default/a:p tcp [10.96.0.5:80] -> 10.0.0.1:80 (50.0%) at 11, 10.0.0.2:80 (50.0%) at 12]"
	if got := backendsOf(dataplane.Build(snap)); fmt.Sprint(got) != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Chains that jump to each other end the walk instead of running 2^32
// times, and odd rulesets do not panic.
func FuzzTraceNFT(f *testing.F) {
	f.Add("table ip t {\n\tchain a {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tjump a\n\t\tjump a\n\t}\n}\n")
	if b, err := os.ReadFile(filepath.Join(testutil.Root(), "dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt")); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		sets, _ := netfilter.NFT(strings.NewReader(in), "fuzz.nft")
		dataplane.Build(&model.Snapshot{Netfilter: sets})
		for _, rs := range sets {
			for _, out := range []bool{false, true} {
				tr, err := dataplane.TraceNAT(rs, dataplane.Probe{Dst: netip.MustParseAddrPort("172.18.0.2:30080"), Proto: "tcp", Output: out})
				if err != nil {
					continue
				}
				sum := 0.0
				for _, d := range tr.Destinations {
					sum += d.Probability
				}
				if sum > 1+1e-9 {
					t.Fatalf("destinations add up to %v", sum)
				}
			}
		}
	})
}

// A chain jumping twice to the next, 30 deep, is 2^30 walks: the trace
// stops after its budget of rule evaluations.
func TestTraceBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("table ip t {\n\tchain c0 {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tjump c1\n\t\tjump c1\n\t}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "\tchain c%d {\n\t\tjump c%d\n\t\tjump c%d\n\t}\n", i, i+1, i+1)
	}
	b.WriteString("\tchain c30 {\n\t\tcounter\n\t}\n}\n")
	sets, err := netfilter.NFT(strings.NewReader(b.String()), "dag.nft")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := dataplane.TraceNAT(sets[0], dataplane.Probe{Dst: netip.MustParseAddrPort("10.0.0.1:80"), Proto: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Unknown) != 1 || !strings.Contains(tr.Unknown[0], "more than 500000 rule evaluations") {
		t.Errorf("assumed %q", tr.Unknown)
	}
}

// kube-proxy's iptables mode through iptables-nft, listed with nft: the
// statistic match shows as `meta random & 2147483647 < N`, the recent
// match as `xt match recent`, and iptables-nft drops the comments, so the
// Service is named from the Kubernetes objects by its ClusterIP.
func TestIPTablesNFT(t *testing.T) {
	const file = "dataplane/testdata/nft/iptables-nft-list-ruleset.txt"
	snap, _, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), file), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := model.Service{}
	svc.Namespace, svc.Name = "default", "a"
	svc.Spec.ClusterIP = "10.96.0.5"
	svc.Spec.Ports = []corev1.ServicePort{{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP}}
	snap.Kube.Services = append(snap.Kube.Services, svc)
	want := "[iptables default/a:p tcp [10.96.0.5:80] -> 10.0.0.1:80 (50.0%) at 29, 10.0.0.2:80 (50.0%) at 33]"
	if got := backendsOf(dataplane.Build(snap)); fmt.Sprint(got) != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	tr := traceOf(t, file, dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.0.5:80"), Proto: "tcp", Output: true})
	wantD := []string{"10.0.0.1:80 50.0% true  line 29 via OUTPUT > KUBE-SERVICES > KUBE-SVC-A > KUBE-SEP-1",
		"10.0.0.2:80 50.0% true  line 33 via OUTPUT > KUBE-SERVICES > KUBE-SVC-A > KUBE-SEP-2"}
	if got := nftDestinations(tr); fmt.Sprint(got) != fmt.Sprint(wantD) {
		t.Errorf("trace\n got %q\nwant %q", got, wantD)
	}
	if fmt.Sprint(tr.Unknown) != "[session affinity (recent) checks taken as a new client]" {
		t.Errorf("assumed %q", tr.Unknown)
	}
}

// kube-dns over three endpoints in the real listing of parse/testdata: a
// third each, the pod's own connections not masqueraded.
func TestNFTTraceKubeDNS(t *testing.T) {
	const svc = "service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp"
	for _, f := range []string{"kube-proxy-list-ruleset.txt", "kube-proxy-list-ruleset-a.txt"} {
		tr := traceOf(t, "parse/testdata/nft/"+f, dataplane.Probe{Dst: netip.MustParseAddrPort("10.96.0.10:53"), Src: netip.MustParseAddr("10.244.0.9"), Proto: "tcp"})
		want := []string{
			"10.244.0.2:53 33.3% true  line 120 via nat-prerouting > services > " + svc + " > endpoint-5OJB2KTY-kube-system/kube-dns/tcp/dns-tcp__10.244.0.2/53",
			"10.244.0.3:53 33.3% true  line 125 via nat-prerouting > services > " + svc + " > endpoint-IQ3D4WIZ-kube-system/kube-dns/tcp/dns-tcp__10.244.0.3/53",
			"10.244.1.4:53 33.3% true  line 130 via nat-prerouting > services > " + svc + " > endpoint-7YDBZ3ZH-kube-system/kube-dns/tcp/dns-tcp__10.244.1.4/53",
		}
		if got := nftDestinations(tr); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %q\nwant %q", f, got, want)
		}
		for _, d := range tr.Destinations {
			if math.Abs(d.Probability-1.0/3) > 1e-12 {
				t.Errorf("%s: %s %v, want 1/3", f, d.Addr, d.Probability)
			}
		}
		if s := stepsOf(tr); len(s) != 8 || s[0] != "85 100.0% nat-prerouting: jump to services" || s[1] != "23 100.0% services: goto "+svc {
			t.Errorf("%s: steps %q", f, s)
		}
	}
}

// TraceTable walks the raw table: a CT --notrack of the ClusterIP is a step
// (not a verdict), and the table's other chain or another address meets
// nothing.
func TestTraceTableRaw(t *testing.T) {
	snap, _, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "fixtures/incidents/service-rule-shadowed-raw/iptables-save.txt"), nil)
	if err != nil || len(snap.Netfilter) != 1 {
		t.Fatalf("%v, %d rulesets", err, len(snap.Netfilter))
	}
	rs := snap.Netfilter[0]
	probe := dataplane.Probe{Dst: netip.MustParseAddrPort("10.43.0.1:443"), Proto: "tcp"}
	tr, err := dataplane.TraceTable(rs, "raw", "PREROUTING", probe)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 1 || tr.Steps[0].Rule.Target != "CT" || tr.Steps[0].Rule.Pos.Line != 4 || tr.Steps[0].Probability != 1 ||
		len(tr.Destinations) != 0 {
		t.Errorf("PREROUTING: %+v, %s", tr.Steps, destinations(tr))
	}
	for _, c := range []struct {
		chain string
		dst   string
	}{{"OUTPUT", "10.43.0.1:443"}, {"PREROUTING", "10.43.0.1:80"}} {
		p := probe
		p.Dst = netip.MustParseAddrPort(c.dst)
		tr, err := dataplane.TraceTable(rs, "raw", c.chain, p)
		if err != nil || len(tr.Steps) != 0 {
			t.Errorf("%s %s: %v %+v", c.chain, c.dst, err, tr)
		}
	}
	if _, err := dataplane.TraceTable(rs, "mangle", "PREROUTING", probe); err == nil || !strings.Contains(err.Error(), "no mangle table") {
		t.Errorf("mangle: %v", err)
	}
	if _, err := dataplane.TraceTable(rs, "raw", "FORWARD", probe); err == nil || !strings.Contains(err.Error(), "no FORWARD chain") {
		t.Errorf("FORWARD: %v", err)
	}
}
