package dataplane_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
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
