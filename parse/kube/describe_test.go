package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

func TestKubectlDescribeSeed(t *testing.T) {
	path := filepath.Join(testutil.Root(), "fixtures", "seeds", "000-apiserver-affinity", "describe-endpoints.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := KubectlDescribe(f, "describe-endpoints.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Endpoints) != 2 {
		t.Fatalf("%d endpoints, want 2", len(k.Endpoints))
	}
	for i, want := range []struct{ name, holder, pos string }{
		{"kube-controller-manager", `{"holderIdentity":"node3_5985cd1e-6967-11eb-8aac-027a1a932b10","leaseDurationSeconds":15,"acquireTime":"2021-02-07T17...`, "describe-endpoints.txt:2 (Endpoints kube-system/kube-controller-manager)"},
		{"kube-scheduler", `{"holderIdentity":"node3_59623573-6967-11eb-8f86-027a1a932b10","leaseDurationSeconds":15,"acquireTime":"2021-02-07T17...`, "describe-endpoints.txt:11 (Endpoints kube-system/kube-scheduler)"},
	} {
		ep := k.Endpoints[i]
		if ep.Name != want.name || ep.Namespace != "kube-system" {
			t.Errorf("endpoints %d = %s/%s", i, ep.Namespace, ep.Name)
		}
		if got := ep.Annotations["control-plane.alpha.kubernetes.io/leader"]; got != want.holder {
			t.Errorf("%s leader annotation = %q\nwant %q", want.name, got, want.holder)
		}
		if got := ep.Source.Pos.String(); got != want.pos {
			t.Errorf("%s pos = %s, want %s", want.name, got, want.pos)
		}
		if !ep.Source.FromTable {
			t.Errorf("%s not marked partial", want.name)
		}
	}
}

func TestKubectlDescribe(t *testing.T) {
	in := `Name:              traefik
Namespace:         kube-system
Labels:            app=traefik
                   chart=traefik-10.3.0
Annotations:       meta.helm.sh/release-name: traefik
Selector:          app=traefik
Type:              LoadBalancer
IP Family Policy:  SingleStack
IP:                10.43.192.176
IPs:               10.43.192.176
Port:              web  80/TCP
TargetPort:        web/TCP
NodePort:          web  32080/TCP
Endpoints:         10.42.0.7:8000
Port:              websecure  443/TCP
TargetPort:        websecure/TCP
NodePort:          websecure  32443/TCP
Endpoints:         10.42.0.7:8443
Session Affinity:  None
Events:            <none>

Name:         kube-dns
Namespace:    kube-system
Labels:       k8s-app=kube-dns
Annotations:  <none>
Subsets:
  Addresses:          10.42.0.3,10.42.0.4
  NotReadyAddresses:  10.42.0.9
  Ports:
    Name     Port  Protocol
    ----     ----  --------
    dns-tcp  53    TCP
    dns      53    UDP

Events:  <none>
garbage here
`
	k, err := KubectlDescribe(strings.NewReader(in), "d.txt")
	if err == nil || err.Error() != `d.txt:36: syntax error: expected a "Field:  value" line of kubectl describe ("garbage here")` {
		t.Errorf("error = %v", err)
	}
	if len(k.Services) != 1 || len(k.Endpoints) != 1 {
		t.Fatalf("%d services, %d endpoints", len(k.Services), len(k.Endpoints))
	}
	svc := k.Services[0]
	if svc.Spec.ClusterIP != "10.43.192.176" || svc.Spec.Type != "LoadBalancer" || len(svc.Spec.Ports) != 2 ||
		svc.Spec.Ports[0].NodePort != 32080 || svc.Spec.Ports[1].NodePort != 32443 || svc.Labels["chart"] != "traefik-10.3.0" ||
		svc.Annotations["meta.helm.sh/release-name"] != "traefik" {
		t.Errorf("service = %+v", svc.Service)
	}
	if np := k.NodePorts(); len(np) != 2 || np[0].Port != 32080 || np[0].Pos.String() != "d.txt:1 (Service kube-system/traefik)" {
		t.Errorf("nodeports = %+v", np)
	}
	ep := k.Endpoints[0]
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 2 || ep.Subsets[0].NotReadyAddresses[0].IP != "10.42.0.9" ||
		len(ep.Subsets[0].Ports) != 2 || ep.Subsets[0].Ports[1].Name != "dns" || ep.Subsets[0].Ports[1].Protocol != "UDP" {
		t.Errorf("endpoints = %+v", ep.Subsets)
	}
}

func FuzzKubectlDescribe(f *testing.F) {
	f.Add("$ kubectl describe ep x\nName: x\nNamespace: y\nAnnotations: a:\n  {b\nSubsets:\n  Addresses: 1.2.3.4\n")
	f.Add("Name: s\nNamespace: n\nType: NodePort\nPort: p 80/TCP\nNodePort: p 30080/TCP\n")
	f.Fuzz(func(t *testing.T, in string) {
		k, _ := KubectlDescribe(strings.NewReader(in), "f")
		for _, s := range k.Services {
			if s.Source.Pos.Line < 1 {
				t.Fatal("service without a line")
			}
		}
	})
}

// A Service's description ends with its Events table: the events are the
// Service's, one per row, a message kubectl wrapped joined to its row.
func TestKubectlDescribeServiceEvents(t *testing.T) {
	in := "$ kubectl describe svc my-service\n" +
		"Name:                     my-service\n" +
		"Namespace:                default\n" +
		"Type:                     LoadBalancer\n" +
		"IP:                       10.96.23.110\n" +
		"Port:                     <unset>  80/TCP\n" +
		"Events:\n" +
		"  Type     Reason                      Age                From                Message\n" +
		"  ----     ------                      ----               ----                -------\n" +
		"  Normal   EnsuringLoadBalancer        11s (x4 over 48s)  service-controller  Ensuring load balancer\n" +
		"  Warning  CreatingLoadBalancerFailed  10s (x3 over 26s)  service-controller  Error creating load balancer (will retry): failed to ensure load balancer for service default/my-service: Multiple tagged security groups found for instance i-00112233; ensure only the k8s security group is tagged; the tagged groups were sg-123(controlplane) sg-456(node)\n" +
		"Name:                     other\n" +
		"Namespace:                default\n" +
		"Type:                     ClusterIP\n" +
		"Events:                   <none>\n"
	k, err := KubectlDescribe(strings.NewReader(in), "svc.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Services) != 2 || len(k.Events) != 2 {
		t.Fatalf("%d services, %d events", len(k.Services), len(k.Events))
	}
	e := k.Events[1]
	if e.InvolvedObject.Kind != "Service" || e.InvolvedObject.Name != "my-service" || e.Namespace != "default" ||
		e.Reason != "CreatingLoadBalancerFailed" || e.Count != 3 || e.Source.Pos.Line != 11 ||
		!strings.HasPrefix(e.Message, "Error creating load balancer (will retry)") ||
		e.Source.Cells["FROM"] != "service-controller" {
		t.Errorf("event %+v (%+v)", e.Event, e.Source)
	}
}
