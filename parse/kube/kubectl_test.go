package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

func readKubeFile(t *testing.T, rel string) *model.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, err := KubeObjects(f, filepath.Base(rel))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestKubeServicesList(t *testing.T) {
	snap := readKubeFile(t, "fixtures/incidents/ephemeral-nodeport/services.json")
	svcs := snap.Kube.Services
	if len(svcs) != 3 {
		t.Fatalf("%d services, want 3", len(svcs))
	}
	var got []string
	for _, np := range snap.Kube.NodePorts() {
		got = append(got, np.Pos.String()+" "+np.Namespace+"/"+np.Service+" "+np.PortName)
	}
	want := []string{
		"services.json:4 (Service kube-system/kubernetes-dashboard) kube-system/kubernetes-dashboard ",
		"services.json:46 (Service kube-system/traefik-ingress) kube-system/traefik-ingress http",
		"services.json:46 (Service kube-system/traefik-ingress) kube-system/traefik-ingress https",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("NodePorts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ip := svcs[1].Status.LoadBalancer.Ingress[0].IP; ip != "10.10.249.145" {
		t.Errorf("load balancer IP %q", ip)
	}
}

func TestKubeStaticPodManifest(t *testing.T) {
	snap := readKubeFile(t, "fixtures/incidents/ephemeral-nodeport/kube-apiserver.yaml")
	if len(snap.Kube.Pods) != 1 || snap.Kube.Pods[0].Namespace != "kube-system" {
		t.Fatalf("pods %+v", snap.Kube.Pods)
	}
	if len(snap.Components) != 1 || snap.Components[0].Name != "kube-apiserver" {
		t.Fatalf("components %+v", snap.Components)
	}
	a, _, ok := snap.ComponentFlag("kube-apiserver", "service-node-port-range")
	if !ok || a.Value != "20000-40000" || a.Pos.String() != "kube-apiserver.yaml:41 (Pod kube-system/kube-apiserver)" {
		t.Errorf("flag %+v at %s", a, a.Pos)
	}
	if p := snap.Kube.Pods[0].Spec.Containers[0].LivenessProbe; p == nil || p.TimeoutSeconds != 15 || p.FailureThreshold != 8 {
		t.Errorf("liveness probe %+v", p)
	}
}

func TestKubeYAMLDocuments(t *testing.T) {
	in := `apiVersion: v1
kind: ServiceList
items:
- metadata:
    name: web
    namespace: shop
  spec:
    type: NodePort
    ports:
    - port: 80
      nodePort: 31080
---
apiVersion: v1
kind: Endpoints
metadata:
  name: web
  namespace: shop
subsets:
- addresses:
  - ip: 10.244.1.7
  ports:
  - port: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
---
apiVersion: v1
kind: Pod
metadata:
  name: kube-proxy-x
  namespace: kube-system
spec:
  containers:
  - name: kube-proxy
    command: ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override", "node1"]
`
	src := &format.File{Name: "objs.yaml"}
	var snap model.Snapshot
	var errs model.ErrorList
	n := readKube(t.Context(), strings.NewReader(in), src, &snap, &errs)
	if errs.Err() != nil || n != 3 {
		t.Fatalf("read %d objects, errors %v; want 3 and none", n, errs.Err())
	}
	if s := snap.Kube.Services; len(s) != 1 || s[0].Spec.Ports[0].NodePort != 31080 || s[0].Source.Pos.String() != "objs.yaml:4 (Service shop/web)" {
		t.Errorf("services %+v", s)
	}
	if e := snap.Kube.Endpoints; len(e) != 1 || e[0].Subsets[0].Addresses[0].IP != "10.244.1.7" || e[0].Source.Pos.Line != 13 {
		t.Errorf("endpoints %+v", e)
	}
	if src.Details["Deployment"] != 1 {
		t.Errorf("details %v: the Deployment should be counted", src.Details)
	}
	a, _, ok := snap.ComponentFlag("kube-proxy", "hostname-override")
	if !ok || a.Value != "node1" || a.Pos.Line != 37 {
		t.Errorf("kube-proxy flag %+v", a)
	}
}

func TestKubeErrors(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Service\",\n  \"spec\": {\"ports\": [{\"port\": \"eighty\"}]}\n}\n": "bad.json:1 (Service): Service: json: cannot unmarshal",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n   bad: indent\n":                                          "bad.json:5: not valid JSON or YAML",
		"apiVersion: v1\nitems: 3\nkind: List\n":                                                                         "bad.json:2: items: expected a list",
	} {
		_, err := KubeObjects(strings.NewReader(in), "bad.json")
		var list model.ErrorList
		if !errors.As(err, &list) || !strings.HasPrefix(list[0].Error(), want) {
			t.Errorf("%q: error %v, want prefix %q", in, err, want)
		}
	}
}

func TestSniffKube(t *testing.T) {
	for in, want := range map[string]bool{
		"{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\"\n}\n": true,
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n":                            true,
		"Name:         kube-controller-manager\nNamespace:    kube-system\n":              false,
		"{\"net.ipv4.ip_forward\": \"1\"}\n":                                              false,
		// the head of a long kubectl -o yaml List: its own kind comes last
		"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: a\n": true,
		"apiVersion: v1\nitems:\n- name: a\n  value: b\n":                                       false,
	} {
		if got := sniffKube("x", []byte(in)) >= 50; got != want {
			t.Errorf("sniff %q = %v, want %v", in[:16], got, want)
		}
	}
}

func FuzzKubeObjects(f *testing.F) {
	for _, rel := range []string{"fixtures/incidents/ephemeral-nodeport/services.json", "fixtures/incidents/ephemeral-nodeport/kube-apiserver.yaml"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	// A YAML list of objects; a paste of kubectl get cm -o yaml with its
	// prompt, cut before the object's kind.
	f.Add("- apiVersion: v1\n  kind: Service\n  metadata:\n    name: web\n")
	f.Add("$ kubectl -n kube-system get cm kube-proxy -o yaml\napiVersion: v1\ndata:\n  config.conf: |-\n    mode: \"\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		snap, err := KubeObjects(strings.NewReader(in), "fuzz.yaml")
		var list model.ErrorList
		if err != nil && !errors.As(err, &list) {
			t.Fatalf("error %v is not positioned", err)
		}
		for _, s := range snap.Kube.Services {
			if s.Source.Pos.File != "fuzz.yaml" || s.Source.Pos.Object == "" {
				t.Fatalf("service without a position: %+v", s.Source)
			}
		}
	})
}

func TestKubeIngress(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"webapp","namespace":"webapp"},
 "spec":{"ingressClassName":"nginx","tls":[{"hosts":["example.com"],"secretName":"webapp-tls"}],
  "rules":[{"host":"example.com","http":{"paths":[{"path":"/webapp","pathType":"Prefix","backend":{"service":{"name":"webapp","port":{"number":80}}}}]}}]},
 "status":{"loadBalancer":{"ingress":[{"ip":"192.168.200.61"}]}}}]}`
	snap, err := KubeObjects(strings.NewReader(in), "ing.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Kube.Ingresses) != 1 || snap.Kube.Len() != 1 {
		t.Fatalf("%d ingresses, %d objects", len(snap.Kube.Ingresses), snap.Kube.Len())
	}
	ing := snap.Kube.Ingresses[0]
	if *ing.Spec.IngressClassName != "nginx" || ing.Spec.TLS[0].SecretName != "webapp-tls" ||
		ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number != 80 ||
		ing.Status.LoadBalancer.Ingress[0].IP != "192.168.200.61" ||
		ing.Source.Pos.String() != "ing.json:2 (Ingress webapp/webapp)" {
		t.Errorf("ingress %+v at %s", ing.Ingress, ing.Source.Pos)
	}
	var merged model.Kube
	merged.Merge(&snap.Kube)
	merged.Merge(&snap.Kube)
	if len(merged.Ingresses) != 2 || merged.Len() != 2 {
		t.Errorf("merge: %d ingresses, Len %d", len(merged.Ingresses), merged.Len())
	}
}

// What troubleshoot writes: an empty List's items as null, custom resources
// as a JSON array of objects, and (run collectors, the CRD list) client-go
// objects without their kind, known by their fields.
func TestKubeTroubleshootShapes(t *testing.T) {
	ins := []string{`{
  "kind": "ServiceList",
  "apiVersion": "v1",
  "metadata": {"resourceVersion": "687"},
  "items": null
}`, `[
  {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "namespace": "ns"}},
  {"apiVersion": "k3s.cattle.io/v1", "kind": "Addon", "metadata": {"name": "b"}}
]`, `{
  "metadata": {"name": "run-example", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "image": "busybox"}]}
}`, `{
  "metadata": {"resourceVersion": "697"},
  "items": [
    {"metadata": {"name": "run-example.1", "namespace": "default"},
     "involvedObject": {"kind": "Pod", "name": "run-example"}, "reason": "Pulled"}
  ]
}`,
		`{"metadata": {"resourceVersion": "1"}, "items": [{"metadata": {"name": "addons.k3s.cattle.io"}, "spec": {"group": "k3s.cattle.io", "names": {"kind": "Addon"}}}]}`,
		`[{"groupVersion": "batch/v1", "resources": [{"name": "jobs", "kind": "Job"}]}]`,
	}
	src := &format.File{Name: "ts.json"}
	snap := &model.Snapshot{}
	n := 0
	for _, in := range ins {
		m, err := KubectlFormat.Parse(t.Context(), strings.NewReader(in), src, snap)
		if err != nil {
			t.Errorf("%v in\n%s", err, in)
		}
		n += m
	}
	if n != 3 {
		t.Errorf("%d records, want 3", n)
	}
	k := snap.Kube
	if len(k.Services) != 1 || k.Services[0].Source.Pos.String() != "ts.json:2 (Service ns/a)" {
		t.Errorf("services %+v", k.Services)
	}
	if len(k.Pods) != 1 || k.Pods[0].Source.Pos.String() != "ts.json:1 (Pod default/run-example)" || k.Pods[0].Spec.Containers[0].Image != "busybox" {
		t.Errorf("pods %+v", k.Pods)
	}
	if len(k.Events) != 1 || k.Events[0].Reason != "Pulled" || k.Events[0].InvolvedObject.Name != "run-example" ||
		k.Events[0].Source.Pos.String() != "ts.json:4 (Event default/run-example.1)" {
		t.Errorf("events %+v", k.Events)
	}
	want := map[string]int{"Service": 1, "Addon": 1, "Pod": 1, "Event": 1, "CustomResourceDefinition": 1, "APIResourceList": 1}
	if fmt.Sprint(src.Details) != fmt.Sprint(want) {
		t.Errorf("details %v, want %v", src.Details, want)
	}
	// An object whose fields say nothing is still reported.
	_, err := KubectlFormat.Parse(t.Context(), strings.NewReader(`{"metadata": {"name": "mystery"}}`), src, snap)
	if err == nil || err.Error() != "ts.json:1: object without a kind" {
		t.Errorf("mystery object: %v", err)
	}
}

// Every list of model.Kube is found by the kind its elements embed, and its
// elements have a Source: kubeNode fills a list by kind name alone.
func TestKubeListEveryKind(t *testing.T) {
	var k model.Kube
	v := reflect.ValueOf(&k).Elem()
	for i := range v.NumField() {
		elem := v.Field(i).Type().Elem()
		kind := elem.Field(0).Name
		if !elem.Field(0).Anonymous {
			t.Errorf("Kube.%s: %s does not embed its object first", v.Type().Field(i).Name, elem.Name())
		}
		if f, ok := elem.FieldByName("Source"); !ok || f.Type != reflect.TypeOf(model.Source{}) {
			t.Errorf("Kube.%s: %s has no Source", v.Type().Field(i).Name, elem.Name())
		}
		if l, ok := kubeList(&k, kind); !ok || l.Type() != v.Field(i).Type() {
			t.Errorf("kind %s is not found in Kube.%s", kind, v.Type().Field(i).Name)
		}
	}
	if _, ok := kubeList(&k, "Secret"); ok {
		t.Error("a kind the model does not keep was found")
	}
}
