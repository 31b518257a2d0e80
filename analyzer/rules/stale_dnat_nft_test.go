package rules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
)

// endpointsWeb is `kubectl get endpoints web -o json` after the Pod at
// 10.244.2.6 was replaced by one at 10.244.3.8.
const endpointsWeb = `{
    "apiVersion": "v1",
    "kind": "Endpoints",
    "metadata": {
        "annotations": {
            "endpoints.kubernetes.io/last-change-trigger-time": "2026-11-20T09:14:02Z"
        },
        "creationTimestamp": "2026-11-18T16:40:11Z",
        "labels": {
            "app": "web"
        },
        "name": "web",
        "namespace": "default",
        "resourceVersion": "48213",
        "uid": "5b0f3f3e-2d64-4a53-9b43-6a8f1f0c2d11"
    },
    "subsets": [
        {
            "addresses": [
                {
                    "ip": "10.244.1.5",
                    "nodeName": "kind-worker",
                    "targetRef": {
                        "kind": "Pod",
                        "name": "web-7c9d8f5b6d-h2x4q",
                        "namespace": "default",
                        "uid": "0c6d2a51-7f2e-4b8e-a1d4-3e9b5c7a8f20"
                    }
                },
                {
                    "ip": "10.244.3.8",
                    "nodeName": "kind-worker3",
                    "targetRef": {
                        "kind": "Pod",
                        "name": "web-7c9d8f5b6d-q8m2z",
                        "namespace": "default",
                        "uid": "9e4b7c12-5a3d-4f6e-8b2c-1d0a9f8e7c63"
                    }
                }
            ],
            "ports": [
                {
                    "name": "http",
                    "port": 8080,
                    "protocol": "TCP"
                }
            ]
        }
    ]
}
`

// stale-dnat holds kube-proxy's nftables rules against the Endpoints as it
// does iptables rules: the endpoint chain to 10.244.2.6 is stale, and
// 10.244.3.8 gets no traffic from this node.
func TestStaleDNATNFT(t *testing.T) {
	nft, err := os.ReadFile(filepath.Join(testutil.Root(), "dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt"))
	if err != nil {
		t.Fatal(err)
	}
	res := runOnFiles(t, rules.StaleDNAT, map[string]string{"nft-list-ruleset.txt": string(nft), "endpoints-web.json": endpointsWeb})
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings: %+v", len(res.Findings), res.Findings)
	}
	f := res.Findings[0]
	if f.Title != "default/web:http: 1 of 2 NAT targets are stale (~50.0% of connections fail)" {
		t.Errorf("title %q", f.Title)
	}
	for k, want := range map[string]string{
		"service":           "default/web:http",
		"frontends":         "[10.96.100.10:80 NodePort 30080]",
		"chain":             "service-HVFWP5L3-default/web/tcp/http",
		"stale_targets":     "[10.244.2.6:8080 (50.0%)]",
		"missing_endpoints": "[10.244.3.8]",
		"expected_failures": "50.0%",
	} {
		if got := fmt.Sprint(f.Facts[k]); got != want {
			t.Errorf("fact %s = %s, want %s", k, got, want)
		}
	}
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, fmt.Sprintf("%s:%d %s", filepath.Base(e.Pos.File), e.Pos.Line, e.Note))
	}
	want := []string{
		"nft-list-ruleset.txt:30 default/web:http: 10.96.100.10:80, NodePort 30080 -> service-HVFWP5L3-default/web/tcp/http",
		"nft-list-ruleset.txt:131 DNAT to 10.244.2.6:8080, which no endpoint has",
	}
	if len(ev) < 3 || fmt.Sprint(ev[:2]) != fmt.Sprint(want) || filepath.Base(f.Evidence[2].Pos.File) != "endpoints-web.json" {
		t.Errorf("evidence\n got %q\nwant %q then the Endpoints", ev, want)
	}
}
