package rules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
)

// traefikLog is traefik's client-go failing on the k3s kubernetes Service
// (the lines of the troubleshoot test bundle).
const traefikLog = `time="2022-12-20T23:41:04Z" level=error msg="Error watching kubernetes events: could not retrieve server version: Get \"https://10.43.0.1:443/version?timeout=32s\": dial tcp 10.43.0.1:443: i/o timeout" providerName=kubernetes
E1220 23:41:04.436637       1 reflector.go:138] pkg/mod/k8s.io/client-go@v0.22.1/tools/cache/reflector.go:167: Failed to watch *v1.Service: failed to list *v1.Service: Get "https://10.43.0.1:443/api/v1/services?limit=500&resourceVersion=0": dial tcp 10.43.0.1:443: i/o timeout
`

const serviceKubernetes = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes","namespace":"default"},
 "spec":{"clusterIP":"10.43.0.1","clusterIPs":["10.43.0.1"],"ports":[{"name":"https","port":443,"protocol":"TCP","targetPort":6443}],"type":"ClusterIP"}}
`

func endpointsKubernetes(ips ...string) string {
	var addrs []string
	for _, ip := range ips {
		addrs = append(addrs, fmt.Sprintf(`{"ip":%q}`, ip))
	}
	return `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"kubernetes","namespace":"default"},
 "subsets":[{"addresses":[` + strings.Join(addrs, ",") + `],"ports":[{"name":"https","port":6443,"protocol":"TCP"}]}]}
`
}

// natWithoutKubernetes is a node's nat table (kube-proxy iptables mode)
// that holds kube-dns's ports and no rule for the kubernetes Service.
const natWithoutKubernetes = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SVC-ERIFXISQEP7F7OF4 - [0:0]
:KUBE-SVC-JD5MR3NA4I4DYORP - [0:0]
:KUBE-SEP-IT2ZTR26TO4XFPTO - [0:0]
:KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]
:KUBE-SEP-ZP3FB6NMPNCO4VBJ - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.43.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4
-A KUBE-SERVICES -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:metrics cluster IP" -m tcp --dport 9153 -j KUBE-SVC-JD5MR3NA4I4DYORP
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.42.0.4:53" -j KUBE-SEP-IT2ZTR26TO4XFPTO
-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.42.0.4:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-JD5MR3NA4I4DYORP -m comment --comment "kube-system/kube-dns:metrics -> 10.42.0.4:9153" -j KUBE-SEP-ZP3FB6NMPNCO4VBJ
-A KUBE-SEP-IT2ZTR26TO4XFPTO -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp" -m tcp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-ZP3FB6NMPNCO4VBJ -p tcp -m comment --comment "kube-system/kube-dns:metrics" -m tcp -j DNAT --to-destination 10.42.0.4:9153
COMMIT
`

// apiserver-unreachable holds the ClusterIP's NAT rules against the
// kubernetes Endpoints: the real iptables-save of the apiserver-affinity
// incident DNATs 10.43.0.1:443 to three apiservers.
func TestAPIServerUnreachableDataplane(t *testing.T) {
	realNAT, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/apiserver-affinity/iptables-save-node1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		nat       string
		endpoints []string
		severity  analyzer.Severity
		dataplane string
		evidence  string // the dataplane's evidence
	}{{
		// One DNAT target is no longer an apiserver endpoint.
		name: "stale target", nat: string(realNAT), endpoints: []string{"10.150.79.149", "10.150.79.150"},
		severity:  analyzer.Error,
		dataplane: "the node's rules DNAT 10.43.0.1:443 to 10.150.79.151:6443, which no apiserver endpoint has (see stale-dnat)",
		evidence:  "iptables-save.txt:16 (The node's rules (KUBE-SVC-NPX46M4PTMTKRN6Y) DNAT 10.43.0.1:443 to 10.150.79.149:6443, 10.150.79.150:6443, 10.150.79.151:6443, of which 10.150.79.151:6443 is no apiserver endpoint)",
	}, {
		// The rules are right: the path after the DNAT is the suspect.
		name: "rules match", nat: string(realNAT), endpoints: []string{"10.150.79.149", "10.150.79.150", "10.150.79.151"},
		severity:  analyzer.Warning,
		dataplane: "DNAT to the endpoints",
		evidence:  "iptables-save.txt:16 (The node's rules (KUBE-SVC-NPX46M4PTMTKRN6Y) DNAT 10.43.0.1:443 to 10.150.79.149:6443, 10.150.79.150:6443, 10.150.79.151:6443)",
	}, {
		name: "no rule", nat: natWithoutKubernetes, endpoints: []string{"10.150.79.149"},
		severity:  analyzer.Error,
		dataplane: "the node's rules have no DNAT for 10.43.0.1:443",
		evidence:  "iptables-save.txt:13 (The node's rules hold 3 Service ports but none for 10.43.0.1:443)",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			res := runOnFiles(t, rules.APIServerUnreachable, map[string]string{"iptables-save.txt": tt.nat, "traefik.log": traefikLog,
				"service-kubernetes.json": serviceKubernetes, "endpoints-kubernetes.json": endpointsKubernetes(tt.endpoints...)})
			if len(res.Findings) != 1 {
				t.Fatalf("findings %+v", res.Findings)
			}
			f := res.Findings[0]
			if f.Severity != tt.severity || fmt.Sprint(f.Facts["dataplane"]) != tt.dataplane {
				t.Errorf("%s, dataplane %q", f.Severity, f.Facts["dataplane"])
			}
			if f.Facts["target"] != "kubernetes Service ClusterIP" || f.Facts["errors"] != 2 || f.Facts["failure"] != "i/o timeout" {
				t.Errorf("facts %v", f.Facts)
			}
			var ev []string
			for _, e := range f.Evidence {
				p := e
				p.File = filepath.Base(p.File)
				ev = append(ev, p.String())
			}
			want := []string{"traefik.log:1 (traefik.log: i/o timeout to 10.43.0.1:443)", "traefik.log:2 (traefik.log: i/o timeout to 10.43.0.1:443)",
				"service-kubernetes.json:1 (Service default/kubernetes) (ClusterIP 10.43.0.1)",
				fmt.Sprintf("endpoints-kubernetes.json:1 (Endpoints default/kubernetes) (apiserver endpoints %s:6443)", strings.Join(tt.endpoints, ":6443, ")),
				tt.evidence}
			if strings.Join(ev, "\n") != strings.Join(want, "\n") {
				t.Errorf("evidence\n got %s\nwant %s", strings.Join(ev, "\n     "), strings.Join(want, "\n     "))
			}
		})
	}
}

// In IPVS mode the virtual service of the ClusterIP holds the targets: the
// real ipvsadm -Ln of the ephemeral-nodeport incident sends 10.23.0.1:443
// to three apiservers, one of which the Endpoints no longer list. Without
// the Service object, 10.23.0.1 is taken for the ClusterIP as the first
// address of the Service range.
func TestAPIServerUnreachableIPVS(t *testing.T) {
	ipvs, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/ephemeral-nodeport/ipvsadm.txt"))
	if err != nil {
		t.Fatal(err)
	}
	log := strings.ReplaceAll(traefikLog, "10.43.0.1", "10.23.0.1")
	res := runOnFiles(t, rules.APIServerUnreachable, map[string]string{"ipvsadm.txt": string(ipvs), "traefik.log": log,
		"endpoints-kubernetes.json": endpointsKubernetes("10.10.85.231", "10.10.85.232")})
	if len(res.Findings) != 1 {
		t.Fatalf("findings %+v", res.Findings)
	}
	f := res.Findings[0]
	if f.Severity != analyzer.Error || f.Facts["target"] != "kubernetes Service ClusterIP" ||
		f.Facts["dataplane"] != "the node's rules DNAT 10.23.0.1:443 to 10.10.85.233:6443, which no apiserver endpoint has (see stale-dnat)" ||
		fmt.Sprint(f.Sources) != "[ipvs kube logs]" {
		t.Errorf("%s %v sources %v", f.Severity, f.Facts, f.Sources)
	}
	last := f.Evidence[len(f.Evidence)-1]
	if filepath.Base(last.File) != "ipvsadm.txt" || last.Line != 12 {
		t.Errorf("evidence %v", f.Evidence)
	}
}
