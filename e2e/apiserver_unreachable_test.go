package e2e

import (
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
)

// TestAPIServerUnreachableCorpus runs netmortem on the public logs of the
// shared corpus whose components cannot reach the apiserver (skipped
// without the corpus): CoreDNS and traefik timing out on the kubernetes
// Service's ClusterIP, a kubelet refused by its apiserver. Logs alone:
// warnings.
func TestAPIServerUnreachableCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "logs")
	for _, b := range []bundle{{
		// The `kubectl logs -l k8s-app=kube-dns` section of a pasted
		// session: list and watch failures, traces not counted twice;
		// kube-dns's ClusterIP 10.96.0.10 is in the same range.
		dir: filepath.Join(dir, "inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt"),
		want: []want{{
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "coredns", "address": "10.96.0.1:443",
				"target": "kubernetes Service ClusterIP", "failure": "i/o timeout", "errors": "12",
				"resources": "Service, EndpointSlice, Namespace"},
			evidence: []string{"inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt:133",
				"inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt:134",
				"inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt:141",
				"inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt:182"},
		}},
	}, {
		// traefik's logfmt and klog lines, both on k3s's 10.43.0.1.
		dir: filepath.Join(dir, "troubleshoot-testdata_traefik-previous_failed-to-list.log"),
		want: []want{{
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "troubleshoot-testdata_traefik-previous_failed-to-list.log", "address": "10.43.0.1:443",
				"target": "kubernetes Service ClusterIP", "failure": "i/o timeout", "errors": "14",
				"first": "2022-12-20T23:41:04Z", "last": "2022-12-20T23:41:05Z",
				"resources": "TLSStore, MiddlewareTCP, IngressRouteTCP, IngressRoute, Middleware, IngressRouteUDP, TLSOption, " +
					"ServersTransport, TraefikService, Endpoints, Service, Secret"},
			evidence: []string{"troubleshoot-testdata_traefik-previous_failed-to-list.log:2",
				"troubleshoot-testdata_traefik-previous_failed-to-list.log:5",
				"troubleshoot-testdata_traefik-previous_failed-to-list.log:8",
				"troubleshoot-testdata_traefik-previous_failed-to-list.log:39"},
		}},
	}, {
		// The kubelet of a control-plane node while its apiserver
		// restarts: refused, then TLS handshake timeouts and resets.
		dir: filepath.Join(dir, "inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log"),
		want: []want{{
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "kubelet", "node": "controller", "address": "192.168.1.120:6443",
				"target": "apiserver address", "failure": "connection refused, TLS handshake timeout, connection reset by peer",
				"errors": "56", "first": "Oct 22 16:45:57.657939", "last": "Oct 22 16:46:31.772715",
				"resources": "Node, Service, CSIDriver, RuntimeClass"},
			evidence: []string{"inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log:27",
				"inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log:28",
				"inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log:32",
				"inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log:192"},
		}},
	}, {
		// A k3d support bundle (troubleshoot): traefik (this run and the
		// previous one, one finding) and local-path-provisioner time out on the
		// ClusterIP that the bundle's Service default/kubernetes has.
		dir: filepath.Join(dir, "..", "support-bundles", "troubleshoot_testdata_support-bundle_k3d-1.24.4.tar.gz"),
		want: []want{{
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "local-path-provisioner", "node": "k3d-mycluster-server-0", "address": "10.43.0.1:443",
				"target": "kubernetes Service ClusterIP", "failure": "i/o timeout", "errors": "1",
				"first": "2022-12-21T09:43:10Z", "last": "2022-12-21T09:43:10Z"},
			evidence: []string{k3dLogs + "local-path-provisioner-7b7dc8d6f5-45btl/local-path-provisioner-previous.log:1", k3dService},
		}, {
			// One problem, one finding (one fingerprint): the errors of
			// both runs, from the previous log's first to this one's last.
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "traefik", "address": "10.43.0.1:443", "errors": "28",
				"first": "2022-12-20T23:41:04Z", "last": "2022-12-21T09:43:11Z"},
			evidence: []string{k3dLogs + "traefik-7cd4fcff68-9blj6/traefik-previous.log:2", k3dLogs + "traefik-7cd4fcff68-9blj6/traefik.log:39", k3dService},
		}},
		others: []string{"probe-restart-loop"},
	}} {
		t.Run(filepath.Base(b.dir), func(t *testing.T) { check(t, b) })
	}
}

// Positions in the k3d support bundle.
const (
	k3dBundle  = "troubleshoot_testdata_support-bundle_k3d-1.24.4.tar.gz!support-bundle/cluster-resources/"
	k3dLogs    = k3dBundle + "pods/logs/kube-system/"
	k3dService = k3dBundle + "services/default.json:8 (Service default/kubernetes)"
)

// TestAPIServerUnreachableCoreDNS runs on the log of a real CoreDNS 1.11.1
// whose kubernetes plugin was pointed at a closed apiserver address (see
// parse/testdata/logs/README.md): connection refused on the apiserver's own
// address; the errors plugin's failures to a closed upstream are not the
// apiserver's.
func TestAPIServerUnreachableCoreDNS(t *testing.T) {
	check(t, bundle{
		dir: "parse/testdata/logs/coredns-1.11.1.log",
		want: []want{{
			rule: "apiserver-unreachable", severity: analyzer.Warning,
			facts: map[string]string{"component": "coredns", "address": "127.0.0.1:6443", "target": "apiserver address",
				"failure": "connection refused", "errors": "36", "resources": "Service, Namespace, EndpointSlice"},
			evidence: []string{"coredns-1.11.1.log:1", "coredns-1.11.1.log:2", "coredns-1.11.1.log:3", "coredns-1.11.1.log:66"},
		}},
	})
}
