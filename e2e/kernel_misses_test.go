package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// copyFixture copies files of the fixture folder src (relative to the
// repository) into a new temporary folder, rewriting each whose name edit
// maps, and returns the folder.
func copyFixture(t *testing.T, src string, files []string, edit map[string]func([]byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", src, f))
		if err != nil {
			t.Fatal(err)
		}
		if e := edit[f]; e != nil {
			b = e(b)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// withoutKinds drops the items of the given kinds from a kubectl List.
func withoutKinds(t *testing.T, kinds ...string) func([]byte) []byte {
	return func(b []byte) []byte {
		var list map[string]any
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		var keep []any
		for _, it := range list["items"].([]any) {
			drop := false
			for _, k := range kinds {
				drop = drop || it.(map[string]any)["kind"] == k
			}
			if !drop {
				keep = append(keep, it)
			}
		}
		list["items"] = keep
		out, err := json.MarshalIndent(list, "", "    ")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// The client reaches the isolated Pod through its Service's ClusterIP: the
// capture before the translation shows the ClusterIP, the policies are
// judged on the endpoint the Service translates it to.
func TestNetworkPolicyThroughClusterIP(t *testing.T) {
	denied := func(evidence ...string) want {
		return want{
			rule:     "network-policy-deny",
			severity: analyzer.Error,
			facts: map[string]string{"translated_from": "10.96.86.20:80", "server": "10.86.2.20:8080",
				"service": "shop/cart", "server_pod": "shop/cart-7b9c4d8f6-q4zlm",
				"client": "web/frontend-6d5f7c9b8d-k2x9p (10.86.1.10)", "attempts": "2"},
			evidence: append([]string{"capture.pcap#frame=1",
				"kube.json:424 (NetworkPolicy shop/cart-allow-storefront spec.ingress[0])"}, evidence...),
		}
	}
	unanswered := want{rule: "syn-unanswered", severity: analyzer.Warning,
		facts: map[string]string{"server": "10.96.86.20:80", "attempts": "2"}}
	for _, b := range []bundle{{
		dir:  "fixtures/incidents/network-policy-clusterip",
		want: []want{denied("kube.json:581 (Service shop/cart)", "kube.json:628 (Endpoints shop/cart)"), unanswered},
	}, {
		// The same with the client's namespace admitted: the translated
		// connections pass.
		dir: "fixtures/incidents/network-policy-clusterip-control",
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
	// Without the Service and its endpoints, the node's kube-proxy rules
	// tell the translation.
	files := []string{"capture.pcap", "iptables-save.txt", "kube.json"}
	t.Run("nat-rules", func(t *testing.T) {
		dir := copyFixture(t, "fixtures/incidents/network-policy-clusterip", files,
			map[string]func([]byte) []byte{"kube.json": withoutKinds(t, "Service", "Endpoints", "EndpointSlice")})
		w := denied()
		w.evidence = []string{"capture.pcap#frame=1", "iptables-save.txt:15", "iptables-save.txt:13"}
		check(t, bundle{dir: dir, want: []want{w, {rule: "syn-unanswered", severity: analyzer.Warning,
			facts: map[string]string{"server": "10.96.86.20:80", "attempts": "2"}}}})
	})
	// An endpoint that no listed Pod has may admit the client: the
	// connections are not judged.
	t.Run("endpoint-not-listed", func(t *testing.T) {
		extra := func(b []byte) []byte {
			var list map[string]any
			if err := json.Unmarshal(b, &list); err != nil {
				t.Fatal(err)
			}
			var keep []any
			for _, it := range list["items"].([]any) {
				obj := it.(map[string]any)
				switch obj["kind"] {
				case "EndpointSlice":
					continue
				case "Endpoints":
					ss := obj["subsets"].([]any)[0].(map[string]any)
					ss["addresses"] = append(ss["addresses"].([]any), map[string]any{"ip": "10.86.3.30"})
				}
				keep = append(keep, it)
			}
			list["items"] = keep
			out, err := json.MarshalIndent(list, "", "    ")
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		dir := copyFixture(t, "fixtures/incidents/network-policy-clusterip", []string{"capture.pcap", "kube.json"},
			map[string]func([]byte) []byte{"kube.json": extra})
		check(t, bundle{dir: dir, want: []want{unanswered}})
	})
	// Without any translation the ClusterIP's failures are not judged.
	t.Run("no-translation", func(t *testing.T) {
		dir := copyFixture(t, "fixtures/incidents/network-policy-clusterip", []string{"capture.pcap", "kube.json"},
			map[string]func([]byte) []byte{"kube.json": withoutKinds(t, "Service", "Endpoints", "EndpointSlice")})
		check(t, bundle{dir: dir, want: []want{unanswered}})
	})
}

// The node's capture is a file beside its folder, named
// <node>-<interface>.pcap: it is the node's, and the reverse-path drop is
// found as when the capture is inside the folder; so too when the folder
// is the node's sosreport.
func TestCaptureBesideItsNodesFolder(t *testing.T) {
	const src = "fixtures/incidents/rp-filter-named-capture"
	drop := func(route, addr string) want {
		return want{rule: "rp-filter-drop", severity: analyzer.Error,
			facts: map[string]string{"node": "nmc-rpxn", "server": "10.81.0.2:8080", "attempts": "2",
				"in_interface": "nmc-rpxn0", "route_out": "nmc-rpxn1"},
			evidence: []string{"nmc-rpxn-nmc-rpxn0.pcap#frame=1", route, addr}}
	}
	unanswered := want{rule: "syn-unanswered", severity: analyzer.Warning,
		facts: map[string]string{"server": "10.81.0.2:8080", "attempts": "2"}}
	for _, b := range []bundle{{
		dir: src, want: []want{drop("nmc-rpxn/ip-route.txt:3", "nmc-rpxn/ip-addr.txt:10"), unanswered},
	}, {
		dir: "fixtures/incidents/rp-filter-named-capture-control",
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
	// The node's outputs in its sosreport, under sos's names.
	const sos = "sosreport-nmc-rpxn-2026-11-28-kqzfwta/sos_commands/"
	sosNames := map[string]string{"nmc-rpxn/ip-addr.txt": sos + "networking/ip_-d_address",
		"nmc-rpxn/ip-route.txt": sos + "networking/ip_route_show_table_all", "nmc-rpxn/nstat.txt": sos + "networking/nstat_-zas",
		"nmc-rpxn/sysctl.txt": sos + "kernel/sysctl_-a", "nmc-rpxn-nmc-rpxn0.pcap": "nmc-rpxn-nmc-rpxn0.pcap"}
	sosreport := func(t *testing.T, pcap string) string {
		dir := t.TempDir()
		for from, to := range sosNames {
			if to == "nmc-rpxn-nmc-rpxn0.pcap" {
				to = pcap
			}
			b, err := os.ReadFile(filepath.Join("..", src, from))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("sosreport", func(t *testing.T) {
		w := drop(sos+"networking/ip_route_show_table_all:3", sos+"networking/ip_-d_address:10")
		check(t, bundle{dir: sosreport(t, "nmc-rpxn-nmc-rpxn0.pcap"), want: []want{w, unanswered}})
	})
	// A capture whose name names no folder beside it stays every node's.
	t.Run("unnamed", func(t *testing.T) {
		snap, _, _ := analyze(t, sosreport(t, "capture.pcap"))
		found := false
		for _, in := range snap.Inputs {
			if filepath.Base(in.Path) == "capture.pcap" {
				found = true
				if in.Node != "" {
					t.Errorf("capture.pcap tied to node %q", in.Node)
				}
			}
		}
		if !found {
			t.Error("capture.pcap not read")
		}
	})
}

// The legacy dump is attached beside the node's folder as
// iptables-legacy-<node>.txt, without its header; the host's nft dump
// has no warning: the file's name says the backend and the node.
func TestLegacyDumpNamedAfterItsNode(t *testing.T) {
	const src = "fixtures/incidents/iptables-legacy-named"
	split := want{
		rule:     "iptables-backend-split",
		severity: analyzer.Warning,
		facts: map[string]string{"legacy_rules": "5", "nft_rules": "2", "legacy_owners": "kube-proxy",
			"nft_owners": "Docker", "drop_policies": "filter FORWARD"},
	}
	for _, b := range []bundle{{
		dir: src,
		want: []want{{rule: split.rule, severity: split.severity, facts: split.facts,
			evidence: []string{"iptables-legacy-nmc-ipbn.txt:9", "nmc-ipbn/iptables-save.txt:4"}}},
	}, {
		// The legacy nat table is loaded but empty.
		dir: "fixtures/incidents/iptables-legacy-named-control",
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
	place := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for from, to := range files {
			b, err := os.ReadFile(filepath.Join("..", src, from))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	const sos = "sosreport-nmc-ipbn-2026-11-28-pdlxvqe/sos_commands/networking/iptables-save"
	// Beside the node's sosreport.
	t.Run("sosreport", func(t *testing.T) {
		dir := place(t, map[string]string{"nmc-ipbn/iptables-save.txt": sos,
			"iptables-legacy-nmc-ipbn.txt": "iptables-legacy-nmc-ipbn.txt"})
		w := split
		w.evidence = []string{"iptables-legacy-nmc-ipbn.txt:9", sos + ":4"}
		check(t, bundle{dir: dir, want: []want{w}})
	})
	// Not beside the node's folder: the file's name still names a node the
	// bundle knows.
	t.Run("elsewhere", func(t *testing.T) {
		dir := place(t, map[string]string{"nmc-ipbn/iptables-save.txt": sos,
			"iptables-legacy-nmc-ipbn.txt": "attachments/iptables-legacy-nmc-ipbn.txt"})
		w := split
		w.evidence = []string{"attachments/iptables-legacy-nmc-ipbn.txt:9"}
		check(t, bundle{dir: dir, want: []want{w}})
	})
}

// The node's two NICs on one segment both answer ARP for its address
// (arp_ignore=0): the two MACs are the node's own, listed by its links,
// which is no flap between hosts.
func TestARPFluxIsNotAFlap(t *testing.T) {
	const src = "fixtures/incidents/arp-flux"
	flux := func(evidence ...string) want {
		return want{rule: "arp-flap", severity: analyzer.Info,
			facts: map[string]string{"ip": "10.89.0.10", "arp_flux": "true",
				"macs": "ee:a4:54:9f:b6:b4, fe:cb:76:90:20:d1"},
			evidence: append([]string{"capture.pcap#frame=2", "capture.pcap#frame=3"}, evidence...)}
	}
	for _, c := range []struct {
		name  string
		files []string
		want  []want
	}{
		{"ip-link", []string{"capture.pcap", "ip-link.txt"}, []want{flux("ip-link.txt:3", "ip-link.txt:5")}},
		{"ip-j-link", []string{"capture.pcap", "ip-j-link.json"}, []want{flux()}},
		{"ip-addr", []string{"capture.pcap", "ip-addr.txt"}, []want{flux("ip-addr.txt:7", "ip-addr.txt:13")}},
		// Without the node's links nothing says the MACs are one host's.
		{"capture-alone", []string{"capture.pcap"}, []want{{rule: "arp-flap", severity: analyzer.Warning,
			facts: map[string]string{"ip": "10.89.0.10", "changes": "1"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, bundle{dir: copyFixture(t, src, c.files, nil), want: c.want})
		})
	}
	for _, b := range []bundle{{
		dir: src, want: []want{flux()},
	}, {
		// arp_ignore=1: only the NIC that holds the address answers.
		dir: "fixtures/incidents/arp-flux-control",
	}, {
		// Another host holds the address too: the node's links list one
		// of the two MACs.
		dir: "fixtures/incidents/arp-flux-duplicate",
		want: []want{{rule: "arp-flap", severity: analyzer.Warning,
			facts:    map[string]string{"ip": "10.89.0.10", "macs": "52:10:5e:18:22:57, ce:8e:f1:11:7a:84"},
			evidence: []string{"capture.pcap#frame=2", "capture.pcap#frame=3"}}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
}

// kube-proxy's log, beside two nodes' outputs, names its node by the
// node IP it retrieved: its bind failures are that node's, joined with
// that node's sockets and not another's.
func TestComponentLogTiedToItsNode(t *testing.T) {
	for _, b := range []bundle{{
		dir: "fixtures/incidents/component-log-node",
		want: []want{{rule: "nodeport-held-by-process", severity: analyzer.Error,
			facts:    map[string]string{"nodeport": "45102/TCP", "claimed_by": "node_exporter", "bind_failures": "3"},
			evidence: []string{"kube-proxy-7x2qk.log:3", "ss-lntp.txt:6"}}},
	}, {
		// The holder is on the other node: the failure stays likely.
		dir: "fixtures/incidents/component-log-node-control",
		want: []want{{rule: "nodeport-held-by-process", severity: analyzer.Warning,
			facts:    map[string]string{"nodeport": "45102/TCP", "bind_failures": "3"},
			evidence: []string{"kube-proxy-7x2qk.log:3"}}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) {
			check(t, b)
			snap, _, _ := analyze(t, filepath.Join("..", b.dir))
			for _, le := range snap.Logs {
				if le.Node != "nmc-klb" {
					t.Errorf("%s: log line tied to node %q, want nmc-klb", le.Pos, le.Node)
				}
			}
		})
	}
}

// node1's connections to the kubernetes Service are pinned by its ClientIP
// session affinity to node2's apiserver, which does not run the leaders:
// the ComponentStatus false alarm names the pin.
func TestAPIServerAffinityPinNamed(t *testing.T) {
	const src = "fixtures/incidents/apiserver-affinity-pinned"
	falseAlarm := want{rule: "apiserver-affinity", severity: analyzer.Info,
		facts: map[string]string{"leader_nodes": "node3", "session_affinity": "ClientIP, 10800s",
			"apiserver_pinned_to":   "10.150.79.150 (node2)",
			"apiserver_connections": "12 new connections to port 6443, all to 10.150.79.150"},
		evidence: []string{"iptables-save-node1.txt:18", "capture.pcap"}}
	for _, b := range []bundle{{dir: src, want: []want{falseAlarm}}, {
		// No affinity: the connections spread, nothing is pinned.
		dir: "fixtures/incidents/apiserver-affinity-pinned-control",
		want: []want{{rule: "apiserver-affinity", severity: analyzer.Info,
			facts: map[string]string{"leader_nodes": "node3"}}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
	t.Run("control-not-pinned", func(t *testing.T) {
		_, _, res := analyze(t, filepath.Join("..", "fixtures/incidents/apiserver-affinity-pinned-control"))
		for _, f := range res.Findings {
			if _, ok := f.Facts["apiserver_pinned_to"]; ok {
				t.Errorf("%s: pinned to %v without affinity", f.Rule, f.Facts["apiserver_pinned_to"])
			}
			if _, ok := f.Facts["session_affinity"]; ok {
				t.Errorf("%s: session affinity %v", f.Rule, f.Facts["session_affinity"])
			}
		}
	})
	// The Service's own sessionAffinity, without node1's rules.
	t.Run("service-object", func(t *testing.T) {
		dir := copyFixture(t, src, []string{"componentstatuses.json", "leases-kube-system.json", "ss-lntp.txt",
			"capture.pcap"}, nil)
		svc := `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default"},
 "spec": {"clusterIP": "10.43.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
  "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}, "type": "ClusterIP"}}
`
		if err := os.WriteFile(filepath.Join(dir, "service-kubernetes.json"), []byte(svc), 0o644); err != nil {
			t.Fatal(err)
		}
		w := falseAlarm
		w.evidence = []string{"capture.pcap"}
		check(t, bundle{dir: dir, want: []want{w}})
	})
	// Without the capture the affinity is named, not where it pins.
	t.Run("rules-alone", func(t *testing.T) {
		dir := copyFixture(t, src, []string{"componentstatuses.json", "leases-kube-system.json", "ss-lntp.txt",
			"iptables-save-node1.txt"}, nil)
		w := falseAlarm
		w.facts = map[string]string{"session_affinity": "ClientIP, 10800s"}
		w.evidence = []string{"iptables-save-node1.txt:17"}
		check(t, bundle{dir: dir, want: []want{w}})
		_, _, res := analyze(t, dir)
		for _, f := range res.Findings {
			if _, ok := f.Facts["apiserver_pinned_to"]; ok {
				t.Errorf("pinned to %v without a capture", f.Facts["apiserver_pinned_to"])
			}
		}
	})
}
