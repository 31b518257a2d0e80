// Package e2e runs netmortem end to end on the evidence bundles committed
// under fixtures/: the seed bundles cut from the incident write-ups, and
// the incident bundles made with the real kernel. Each test states the
// findings a reader of that evidence must get, with their facts and the
// positions they cite.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// want is one finding a bundle must produce.
type want struct {
	rule     string
	severity analyzer.Severity
	// facts that must be present with exactly these values (as report.FactValue prints them).
	facts map[string]string
	// evidence positions (model.Pos.String) that must be cited.
	evidence []string
}

// bundle is a fixture directory and what analyzing it must give.
type bundle struct {
	dir  string
	want []want
	// others lists the other rules that may report on this bundle at
	// warning or above; anything else at warning or above fails the test.
	others []string
	// warnings are substrings of the input warnings that must appear.
	warnings []string
}

// analyze reads dir in summary mode and runs every rule on it; the
// analysis of a committed bundle is shared (analyzeShared).
func analyze(t *testing.T, dir string) (*model.Snapshot, model.ErrorList, analyzer.Result) {
	t.Helper()
	return analyzeShared(t, dir, &parse.Options{Summary: parse.Summary{Enabled: true}})
}

func check(t *testing.T, b bundle) {
	t.Helper()
	dir := b.dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir)
	}
	_, warns, res := analyze(t, dir)
	if len(res.Errors) > 0 {
		t.Errorf("rule errors: %+v", res.Errors)
	}
	base := dir
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		base = filepath.Dir(dir)
	}
	rel := func(p model.Pos) string {
		if r, err := filepath.Rel(base, p.File); err == nil {
			p.File = filepath.ToSlash(r)
		}
		return p.String()
	}
	used := make([]bool, len(res.Findings))
	for _, w := range b.want {
		best, bestMiss := -1, ""
		for i, f := range res.Findings {
			if used[i] || f.Rule != w.rule {
				continue
			}
			miss := mismatch(f, w, rel)
			if miss == "" {
				best = i
				break
			}
			if bestMiss == "" {
				bestMiss = miss
			}
		}
		if best < 0 {
			if bestMiss == "" {
				bestMiss = "no finding of that rule"
			}
			t.Errorf("%s: missing %s %s: %s\nfindings: %s", b.dir, w.severity, w.rule, bestMiss, summary(res.Findings, rel))
			continue
		}
		used[best] = true
	}
	for i, f := range res.Findings {
		if used[i] || f.Severity < analyzer.Warning || slices.Contains(b.others, f.Rule) {
			continue
		}
		t.Errorf("%s: unexpected %s %s: %s", b.dir, f.Severity, f.Rule, f.Title)
	}
	for _, w := range b.warnings {
		found := false
		for _, e := range warns {
			if strings.Contains(e.Error(), w) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no input warning containing %q; warnings: %v", b.dir, w, warns)
		}
	}
}

func mismatch(f analyzer.Finding, w want, rel func(model.Pos) string) string {
	if f.Severity != w.severity {
		return fmt.Sprintf("severity %s", f.Severity)
	}
	for k, v := range w.facts {
		got, ok := f.Facts[k]
		if !ok {
			return fmt.Sprintf("no fact %q (facts: %v)", k, f.Facts)
		}
		if g := report.FactValue(got); g != v {
			return fmt.Sprintf("fact %s = %q, want %q", k, g, v)
		}
	}
	var cited []string
	for _, e := range f.Evidence {
		cited = append(cited, rel(e.Pos))
	}
	for _, e := range w.evidence {
		if !slices.Contains(cited, e) {
			return fmt.Sprintf("evidence %s not cited (cited: %v)", e, cited)
		}
	}
	return ""
}

func summary(fs []analyzer.Finding, rel func(model.Pos) string) string {
	var b strings.Builder
	for _, f := range fs {
		var cited []string
		for _, e := range f.Evidence {
			cited = append(cited, rel(e.Pos))
		}
		fmt.Fprintf(&b, "\n  %s %s %q facts=%v evidence=%v", f.Severity, f.Rule, f.Title, f.Facts, cited)
	}
	return b.String()
}

func TestSeeds(t *testing.T) {
	for _, b := range []bundle{{
		dir: "fixtures/seeds/000-apiserver-affinity",
		want: []want{{
			// The leaders and their ports are on node3; the apiserver
			// that answered checks 127.0.0.1 elsewhere.
			rule:     "apiserver-affinity",
			severity: analyzer.Info,
			facts: map[string]string{
				"leader_nodes": "node3", "listening_on": "node3", "not_listening_on": "node1, node2",
				"apiserver_connections": "3 new connections to port 6443, all to 10.150.79.151",
			},
			evidence: []string{"cs.txt:3 (ComponentStatus controller-manager)", "cs.txt:4 (ComponentStatus scheduler)",
				"describe-endpoints.txt:2 (Endpoints kube-system/kube-controller-manager)", "netstat.txt:8", "netstat.txt:9"},
		}},
	}, {
		dir: "fixtures/seeds/004-stale-dnat",
		want: []want{{
			// 65 KUBE-SEP chains at 1/65 each for 77 endpoints.
			rule:     "stale-dnat",
			severity: analyzer.Error,
			facts: map[string]string{
				"service": "kube-system/kube-dns:dns-tcp", "frontends": "10.178.64.10:53",
				"dataplane_backends": "65", "endpoints": "77",
				// the author's nc loop: a quarter of the connects fail
				"observed_failures": "25.7%", "observed_tries": "1000",
			},
			evidence: []string{"iptables-nat-kube-dns.txt:4", "endpoints-count.txt:2 (Endpoints kube-system/kube-dns)", "nc-loop.txt:2"},
		}},
		others: []string{"kube-proxy-sync-errors"},
	}, {
		dir: "fixtures/seeds/001-probe-restart-loop",
		want: []want{{
			// etcd restarted 183 times; its probe allows 15 s, then 8
			// failures 15 s apart; the run before the last exited 0.
			rule:     "probe-restart-loop",
			severity: analyzer.Error,
			facts: map[string]string{
				"pod": "kube-system/etcd-antidote-controller-4m3j", "container": "etcd", "restarts": "183",
				"failing_window_s": "120", "probe_window_s": "135", "failure_threshold": "8", "exit_code": "0",
			},
			evidence: []string{"pods.txt:5 (Pod kube-system/etcd-antidote-controller-4m3j)",
				"etcd.yaml:34 (Pod kube-system/etcd spec.containers[0].livenessProbe)", "docker-ps-a.txt:4"},
		}, {
			rule:     "version-skew",
			severity: analyzer.Warning,
			facts:    map[string]string{"odd_nodes": "antidote-worker-gt5t (v1.11.3)", "cluster_minor": "v1.12"},
			evidence: []string{"nodes.txt:6 (Node antidote-worker-gt5t)"},
		}},
	}, {
		dir: "fixtures/seeds/002-synack-reset",
		want: []want{{
			// The grep'd IPVS table shows NodePorts 20869 ... 39080 in
			// the overlap: proven, hence an error.
			rule:     "ephemeral-nodeport-overlap",
			severity: analyzer.Error,
			facts: map[string]string{
				"ip_local_port_range": "1024-65000",
				"nodeport_range":      "20000-40000",
				"overlap":             "20000-40000",
				"allocated_nodeports_in_overlap": "20869, 21980, 23593, 24795, 24855, 28796, 29385, 29515, 31221, " +
					"32080, 32443, 35723, 35934, 36321, 36704, 37629, 38820, 39080",
			},
			evidence: []string{"sysctl.txt:1", "kube-apiserver-flags.txt:1", "ipvsadm.txt:16", "ipvsadm.txt:34"},
		}, {
			// The tshark packet list: SYN, SYN/ACK, RST, twice, from
			// source port 36704, an IPVS virtual service of the node.
			rule:     "synack-reset",
			severity: analyzer.Error,
			facts: map[string]string{
				"client":        "10.23.77.129",
				"client_ports":  "36704",
				"servers":       "10.23.77.138:80",
				"synacks":       "2",
				"client_resets": "2",
				"owned_ports":   "36704",
				// svc.txt: 443:36704/TCP
				"nodeport_services": "kube-system/kubernetes-dashboard",
			},
			evidence: []string{"probe-failure.tshark.txt:2#frame=649", "probe-failure.tshark.txt:8#frame=650",
				"probe-failure.tshark.txt:14#frame=651", "ipvsadm.txt:16", "ipvsadm.txt:34", "svc.txt:4 (Service kube-system/kubernetes-dashboard)"},
		}, {
			// The TIME-WAIT counts: kubelet probes, Zabbix, and
			// node-local-dns checking itself on 169.254.20.10:8080.
			rule:     "timewait-churn",
			severity: analyzer.Warning,
			facts: map[string]string{
				"timewait_sockets": "1079", "connections_per_s": "18.0", "range_cycle": "59m17s",
				"owned_ports_in_range": "18", "nodeport_overlap": "20000-40000",
			},
			evidence: []string{"ss-timewait.txt:3", "ss-timewait.txt:6", "sysctl.txt:1"},
		}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
}

// TestIncidents runs the bundles reproduced with the real kernel: the
// incident and its healthy control.
func TestIncidents(t *testing.T) {
	for _, b := range []bundle{{
		dir: "fixtures/incidents/ephemeral-nodeport",
		want: []want{{
			rule:     "synack-reset",
			severity: analyzer.Error,
			facts: map[string]string{
				"client":            "10.23.77.129",
				"client_ports":      "36704, 32080",
				"attempts":          "2",
				"synacks":           "6",
				"client_resets":     "6",
				"nodeport_services": "kube-system/kubernetes-dashboard, kube-system/traefik-ingress",
				"nodeport_range":    "20000-40000",
			},
			evidence: []string{"capture.pcap#frame=38", "capture.pcap#frame=39", "capture.pcap#frame=40",
				"ipvsadm.txt:10", "services.json:4 (Service kube-system/kubernetes-dashboard)",
				"kube-apiserver.yaml:41 (Pod kube-system/kube-apiserver)", "sysctl.txt:1"},
		}, {
			rule:     "ephemeral-nodeport-overlap",
			severity: analyzer.Error,
			facts: map[string]string{
				"ip_local_port_range":            "1024-65000",
				"nodeport_range":                 "20000-40000",
				"overlap":                        "20000-40000",
				"allocated_nodeports_in_overlap": "32080, 32443, 36704",
			},
			evidence: []string{"sysctl.txt:1", "sysctl.txt:2", "kube-apiserver.yaml:41 (Pod kube-system/kube-apiserver)"},
		}},
	}, {
		dir: "fixtures/incidents/ephemeral-nodeport-control",
	}, {
		dir: "fixtures/incidents/stale-dnat",
		want: []want{{
			// 10.244.2.7 is no endpoint of kube-dns, yet the node DNATs a
			// share of the connections to it, and nobody answers there.
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.244.2.7:53", "attempts": "8", "syn_retransmissions": "8", "clients": "10.10.0.5"},
			evidence: []string{"capture.pcap#frame=5"},
		}, {
			// The nat table (real iptables output of the node) sends a
			// quarter of kube-dns's connections to 10.244.2.7, which the
			// Endpoints do not list; the capture shows them failing.
			rule:     "stale-dnat",
			severity: analyzer.Error,
			facts: map[string]string{
				"service": "kube-system/kube-dns:dns-tcp", "frontends": "10.96.0.10:53", "dataplane_backends": "4",
				"endpoints": "3", "stale_targets": "10.244.2.7:53 (25.0%)", "expected_failures": "25.0%",
				"failed_attempts_to_stale": "8",
			},
			evidence: []string{"iptables-nat-nvL.txt:48", "iptables-nat-nvL.txt:39", "capture.pcap#frame=5",
				"endpoints-kube-dns.json:1 (Endpoints kube-system/kube-dns)"},
		}},
		others: []string{"kube-proxy-sync-errors"},
	}, {
		dir: "fixtures/incidents/stale-dnat-control",
	}, {
		dir: "fixtures/incidents/lb-conflict",
		want: []want{{
			// The VIP's ARP owner moves from node1 to node2.
			rule: "arp-flap", severity: analyzer.Warning,
			facts:    map[string]string{"ip": "192.168.200.99", "macs": "00:22:4d:a8:ba:40, 00:22:4d:a8:ba:4c", "changes": "1"},
			evidence: []string{"capture.pcap#frame=2", "capture.pcap#frame=16", "service-ingress-nginx.json:1 (Service ingress-nginx/ingress-nginx-controller)"},
		}, {
			// node2, which has the VIP's ARP entry, redirects its traffic.
			rule: "icmp-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"icmp": "redirect", "from": "192.168.200.62", "destination": "192.168.200.99:443",
				"destination_mac": "00:22:4d:a8:ba:4c", "count": "6"},
			evidence: []string{"capture.pcap#frame=19", "capture.pcap#frame=18", "ip-neigh-after.txt:1"},
		}, {
			rule: "lb-controller-conflict", severity: analyzer.Error,
			facts: map[string]string{"service": "ingress-nginx/ingress-nginx-controller", "marked_by": "MetalLB, kube-vip",
				"load_balancer_ips": "192.168.200.99", "vip_macs": "2", "controller_log_lines": "12"},
			evidence: []string{"service-ingress-nginx.json:1 (Service ingress-nginx/ingress-nginx-controller)", "metallb-controller.log:1"},
		}},
	}, {
		dir: "fixtures/incidents/lb-conflict-control",
	}, {
		dir: "fixtures/incidents/probe-restart-loop",
		want: []want{{
			// The probe checks 2382; etcd's metrics listen on 2381.
			rule: "probe-restart-loop", severity: analyzer.Error,
			facts: map[string]string{"pod": "kube-system/etcd-cp-1", "restarts": "183", "probe_port": "2382",
				"listen_ports": "2379, 2381, 2380", "probe_window_s": "130", "observed_run": "2m14s", "exit_code": "0"},
			evidence: []string{"pods-kube-system.json:4 (Pod kube-system/etcd-cp-1)",
				"etcd.yaml:29 (Pod kube-system/etcd spec.containers[0].livenessProbe)",
				"events-kube-system.json:32 (Event kube-system/etcd-cp-1.17f2a3b4c5d6e801)", "etcd.log:4"},
		}, {
			rule: "version-skew", severity: analyzer.Warning,
			facts: map[string]string{"odd_nodes": "worker-3 (v1.30.6)", "apiserver": "v1.31.2"},
		}},
	}, {
		dir: "fixtures/incidents/probe-restart-loop-control",
	}, {
		dir: "fixtures/incidents/apiserver-affinity",
		want: []want{{
			// Leases and listening sockets put both leaders on node3;
			// the apiserver that answered probed its own 127.0.0.1.
			rule: "apiserver-affinity", severity: analyzer.Info,
			facts: map[string]string{"leader_nodes": "node3", "listening_on": "node3", "not_listening_on": "node1, node2"},
			evidence: []string{"componentstatuses.json:4 (ComponentStatus controller-manager)",
				"leases-kube-system.json:4 (Lease kube-system/kube-controller-manager)", "ss-lntp.txt:11", "ss-lntp.txt:12"},
		}},
	}, {
		dir: "fixtures/incidents/apiserver-affinity-control",
	}, {
		dir: "fixtures/incidents/service-rule-shadowed",
		want: []want{{
			// A DNAT by hand in nat OUTPUT, before kube-proxy's jump,
			// pins node1's connections to one apiserver.
			rule: "service-rule-shadowed", severity: analyzer.Error,
			facts: map[string]string{"hook": "nat OUTPUT", "action": "DNAT to 10.150.81.3:6443", "pinned_clients": "10.150.81.1",
				"service": "default/kubernetes:https"},
			evidence: []string{"iptables-save-node1.txt:12", "iptables-save-node1.txt:17",
				"service-kubernetes.json:1 (Service default/kubernetes)"},
		}, {
			// What the rule does to the counts of kube-proxy's spread.
			rule: "connection-skew", severity: analyzer.Warning,
		}},
	}, {
		dir: "fixtures/incidents/service-rule-shadowed-control",
	}, {
		dir: "fixtures/incidents/conntrack-stale-udp",
		want: []want{{
			// Six UDP entries of kube-dns still reply from the deleted
			// CoreDNS Pod; the rules and the Endpoints say 10.244.3.8.
			rule: "conntrack-stale-udp", severity: analyzer.Error,
			facts: map[string]string{"stale_backend": "10.244.2.7", "entries": "6", "endpoints": "10.244.3.8:53",
				"cluster_ip": "10.96.0.10:53"},
			evidence: []string{"conntrack-L.txt:1", "endpoints-kube-dns.json:1 (Endpoints kube-system/kube-dns)", "iptables-save.txt:12"},
		}},
	}, {
		dir: "fixtures/incidents/conntrack-stale-udp-control",
	}, {
		// One client tries port 9100 of 12 hosts behind a router that
		// drops: told once, listing the hosts.
		dir: "fixtures/captures/sweep.pcap",
		want: []want{{
			rule: "syn-unanswered", severity: analyzer.Warning,
			facts: map[string]string{"port": "9100", "hosts": "12", "attempts": "12", "syn_retransmissions": "0", "clients": "10.92.0.1",
				"host_list": "10.244.1.7, 10.244.2.7, 10.244.3.7, 10.244.4.7, 10.244.5.7, 10.244.6.7, 10.244.7.7, 10.244.8.7, " +
					"10.244.9.7, 10.244.10.7, 10.244.11.7, 10.244.12.7"},
			evidence: []string{"sweep.pcap#frame=1", "sweep.pcap#frame=5"},
		}},
	}, {
		// tcpdump -i any where a bridge forwards: every packet twice. The
		// ICMP error is one error, the refused connect one attempt.
		dir: "fixtures/captures/any-bridge.pcap",
		want: []want{{
			rule: "icmp-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"icmp": "port-unreachable", "destination": "10.91.0.2:8082", "count": "1"},
		}, {
			rule: "syn-refused", severity: analyzer.Warning,
			facts: map[string]string{"server": "10.91.0.2:8081", "attempts": "1"},
		}},
	}, {
		dir: "fixtures/incidents/vip-unannounced",
		want: []want{{
			// Nobody answers ARP for the LoadBalancer IP: no node
			// announces it.
			rule: "arp-unanswered", severity: analyzer.Warning,
			facts: map[string]string{"ip": "192.168.210.99", "requests": "3", "askers": "192.168.210.1", "neighbor_state": "FAILED",
				"ip_is": "LoadBalancer IP 192.168.210.99 of Service ingress-nginx/ingress-nginx-controller"},
			evidence: []string{"capture.pcap#frame=3", "capture.pcap#frame=4", "capture.pcap#frame=5", "ip-neigh.txt:2",
				"service-ingress-nginx.json:1 (Service ingress-nginx/ingress-nginx-controller)"},
		}},
	}, {
		dir: "fixtures/incidents/vip-unannounced-control",
	}, {
		// all.rp_filter=1 makes nmc-rpn0 strict; the route back to the
		// client leaves by nmc-rpn1, so the SYNs are dropped on arrival.
		dir: "fixtures/incidents/rp-filter-drop",
		want: []want{{
			rule:     "rp-filter-drop",
			severity: analyzer.Error,
			facts: map[string]string{"server": "10.81.0.2:8080", "attempts": "2", "in_interface": "nmc-rpn0",
				"route_out": "nmc-rpn1", "net.ipv4.conf.all.rp_filter": "1", "net.ipv4.conf.nmc-rpn0.rp_filter": "0"},
			evidence: []string{"capture.pcap#frame=1", "ip-route.txt:3", "ip-addr.txt:9", "sysctl.txt:1", "sysctl.txt:3"},
		}, {
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.81.0.2:8080", "attempts": "2"},
			evidence: []string{"capture.pcap#frame=1"},
		}},
	}, {
		// The same path with a loose filter: the SYNs look unanswered on
		// the receiving interface, but rp_filter is ruled out.
		dir: "fixtures/incidents/rp-filter-drop-loose",
		want: []want{{
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.81.0.2:8080", "attempts": "2"},
			evidence: []string{"capture.pcap#frame=1"},
		}},
	}, {
		dir: "fixtures/incidents/rp-filter-drop-control",
	}, {
		// SNAT to 10 ports, 16 connections at once to one server: conntrack
		// holds every port and the 6 other SYNs are dropped.
		dir: "fixtures/incidents/snat-port-exhaustion",
		want: []want{{
			rule:     "snat-port-exhaustion",
			severity: analyzer.Error,
			facts: map[string]string{"snat": "SNAT to 10.85.0.2:40000-40009", "destination": "10.85.0.1:8080",
				"ports_in_use": "10", "capacity": "10", "failed_attempts": "6", "insert_failed": "29"},
			evidence: []string{"iptables-save.txt:7", "conntrack-L.txt:1", "conntrack-S.txt:1"},
		}, {
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.85.0.1:8080", "attempts": "6"},
		}, {
			rule:     "conntrack-drops",
			severity: analyzer.Warning,
			facts:    map[string]string{"insert_failed": "29"},
		}},
	}, {
		dir: "fixtures/incidents/snat-port-exhaustion-control",
	}, {
		// The same symptom from a server's connection limit: the SNAT range
		// is wide and far from full.
		dir: "fixtures/incidents/snat-port-exhaustion-server-limit",
		want: []want{{
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.85.0.1:8080", "attempts": "6"},
		}},
	}, {
		// shop's policies isolate cart and admit port 8080 only from
		// team=storefront namespaces; web is team=web.
		dir: "fixtures/incidents/network-policy-deny",
		want: []want{{
			rule:     "network-policy-deny",
			severity: analyzer.Error,
			facts: map[string]string{"server": "10.86.2.20:8080", "server_pod": "shop/cart-7b9c4d8f6-q4zlm",
				"client": "web/frontend-6d5f7c9b8d-k2x9p (10.86.1.10)", "attempts": "2"},
			evidence: []string{"capture.pcap#frame=1", "kube.json:174 (Pod shop/cart-7b9c4d8f6-q4zlm)",
				"kube.json:424 (NetworkPolicy shop/cart-allow-storefront spec.ingress[0])"},
		}, {
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.86.2.20:8080", "attempts": "2"},
		}},
	}, {
		dir: "fixtures/incidents/network-policy-deny-control",
	}, {
		// The policies admit the client; the SYNs are dropped for another
		// reason.
		dir: "fixtures/incidents/network-policy-deny-other-cause",
		want: []want{{
			rule:     "syn-unanswered",
			severity: analyzer.Warning,
			facts:    map[string]string{"server": "10.86.2.20:8080", "attempts": "2"},
		}},
	}, {
		// One client tries 24 ports of one host, one SYN each: told once
		// per outcome, not port by port.
		dir: "fixtures/captures/portscan.pcap",
		want: []want{{
			rule: "syn-unanswered", severity: analyzer.Warning,
			facts: map[string]string{"server": "10.98.0.2", "ports": "12", "attempts": "12", "clients": "10.98.0.1",
				"syn_retransmissions": "0", "port_list": "1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011"},
			evidence: []string{"portscan.pcap#frame=1", "portscan.pcap#frame=5"},
		}, {
			rule: "syn-refused", severity: analyzer.Warning,
			facts: map[string]string{"server": "10.98.0.2", "ports": "12", "attempts": "12",
				"port_list": "2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009, 2010, 2011"},
			evidence: []string{"portscan.pcap#frame=13", "portscan.pcap#frame=14"},
		}},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
}

// TestPartialBundles checks that each rule says what it can prove from part
// of the evidence: the capture alone, or the node's settings alone.
func TestPartialBundles(t *testing.T) {
	src := filepath.Join("..", "fixtures/incidents/ephemeral-nodeport")
	for _, c := range []struct {
		files []string
		want  want
	}{{
		files: []string{"capture.pcap"},
		want: want{rule: "synack-reset", severity: analyzer.Warning,
			facts:    map[string]string{"client_ports": "36704, 32080", "attempts": "2"},
			evidence: []string{"capture.pcap#frame=38", "capture.pcap#frame=59"}},
	}, {
		files: []string{"sysctl.txt", "kube-apiserver.yaml"},
		want: want{rule: "ephemeral-nodeport-overlap", severity: analyzer.Warning,
			facts:    map[string]string{"overlap": "20000-40000"},
			evidence: []string{"sysctl.txt:1", "kube-apiserver.yaml:41 (Pod kube-system/kube-apiserver)"}},
	}, {
		files: []string{"sysctl.txt"},
		want: want{rule: "ephemeral-nodeport-overlap", severity: analyzer.Warning,
			facts:    map[string]string{"nodeport_range": "30000-32767", "overlap": "30000-32767"},
			evidence: []string{"sysctl.txt:1"}},
	}} {
		t.Run(strings.Join(c.files, "+"), func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			check(t, bundle{dir: dir, want: []want{c.want}})
		})
	}
}

// TestDamagedBundle: a truncated capture, a garbage line in sysctl output
// and a file nobody reads each give a positioned warning, and the rest of
// the bundle still proves the incident.
func TestDamagedBundle(t *testing.T) {
	src := filepath.Join("..", "fixtures/incidents/ephemeral-nodeport")
	dir := t.TempDir()
	for _, f := range []string{"capture.pcap", "sysctl.txt", "ipvsadm.txt", "services.json", "kube-apiserver.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "capture.pcap":
			b = b[:len(b)*55/100] // cut inside a packet record, between the two reset attempts
		case "sysctl.txt":
			lines := strings.SplitAfter(string(b), "\n")
			b = []byte(lines[0] + "this line is not sysctl output\n" + strings.Join(lines[1:], ""))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "screenshot.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, _ := analyze(t, dir)
	skipped := false
	for _, in := range snap.Inputs {
		if filepath.Base(in.Path) == "screenshot.png" && in.Skipped != "" {
			skipped = true
		}
	}
	if !skipped {
		t.Errorf("screenshot.png not listed as skipped: %+v", snap.Inputs)
	}
	check(t, bundle{
		dir: dir,
		want: []want{{
			rule: "synack-reset", severity: analyzer.Error,
			facts:    map[string]string{"client_ports": "36704"},
			evidence: []string{"capture.pcap#frame=38", "capture.pcap#frame=40"},
		}, {
			rule: "ephemeral-nodeport-overlap", severity: analyzer.Error,
			facts:    map[string]string{"overlap": "20000-40000"},
			evidence: []string{"sysctl.txt:1", "sysctl.txt:3"},
		}},
		warnings: []string{"capture.pcap#frame=", "truncated or corrupt packet record", "sysctl.txt:2: "},
	})
}

// TestCaptureRules: the handshake and ARP captures made with the real kernel
// give one finding per failure they contain, from the capture alone.
func TestCaptureRules(t *testing.T) {
	check(t, bundle{
		dir: "fixtures/captures/handshakes.pcap",
		want: []want{
			{rule: "syn-refused", severity: analyzer.Warning, facts: map[string]string{"server": "10.99.0.2:81", "attempts": "1"}},
			{rule: "syn-refused", severity: analyzer.Warning, facts: map[string]string{"server": "[fd99::2]:8081"}},
			{rule: "syn-unanswered", severity: analyzer.Warning, facts: map[string]string{"server": "10.99.0.2:82", "syn_retransmissions": "1"}},
			{rule: "synack-reset", severity: analyzer.Warning, facts: map[string]string{"servers": "10.99.0.2:83", "client_resets": "2"}},
			{rule: "icmp-unreachable", severity: analyzer.Warning, facts: map[string]string{"icmp": "port-unreachable", "destination": "10.99.0.2:84", "from": "10.99.0.2"}},
			{rule: "icmp-unreachable", severity: analyzer.Warning, facts: map[string]string{"icmp": "host-unreachable", "destination": "10.99.0.2:85"}},
			{rule: "icmp-unreachable", severity: analyzer.Warning, facts: map[string]string{"icmp": "admin-prohibited", "destination": "10.99.0.2:86"}},
		},
	})
	check(t, bundle{
		dir: "fixtures/captures/arp.pcapng",
		want: []want{{
			rule: "arp-flap", severity: analyzer.Warning,
			facts:    map[string]string{"ip": "192.168.200.99", "macs": "02:00:00:00:0a:01, 02:00:00:00:0b:01", "changes": "1"},
			evidence: []string{"arp.pcapng#frame=1", "arp.pcapng#frame=5"},
		}},
	})
	// The same ICMP errors pasted as tcpdump -v text (seed 003).
	check(t, bundle{
		dir: "fixtures/seeds/003-lb-controller-conflict",
		want: []want{
			// The VIP resolves to node2's own MAC, and node2 calls it
			// unreachable: the neighbor tables join the ICMP error.
			{rule: "icmp-unreachable", severity: analyzer.Warning,
				facts: map[string]string{"icmp": "host-unreachable", "from": "192.168.200.62", "destination": "192.168.200.99:443",
					"destination_mac": "00:22:4d:a8:ba:4c", "app_errors": "3"},
				evidence: []string{"tcpdump-icmp-unreachable.txt:2", "ip-neigh-after.txt:6", "ip-neigh-after.txt:4",
					"nginx-error.log:1", "nginx-error.log:2"}},
			{rule: "icmp-unreachable", severity: analyzer.Warning,
				facts:    map[string]string{"icmp": "redirect", "from": "192.168.200.61", "gateway": "192.168.200.99"},
				evidence: []string{"tcpdump-icmp-redirect.txt:1"}},
			// MetalLB rewrites Services while kubespray deploys kube-vip;
			// the inventory shown already turns its services mode off.
			{rule: "lb-controller-conflict", severity: analyzer.Warning,
				facts: map[string]string{"service_updates": "2", "kube_vip_services": "false",
					"services_updated": "ingress-nginx/ingress-nginx, minio/my-minio-console-lb"},
				evidence: []string{"kube-vip-settings.yml:2", "metallb-controller.log:2", "metallb-controller.log:5", "kube-vip-settings.yml:10"}},
		},
	})
}
