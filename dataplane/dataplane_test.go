package dataplane_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
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
