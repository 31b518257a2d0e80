package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// tableSummary renders what a table gave, one line per object, for exact
// comparison.
func tableSummary(k *model.Kube) string {
	var b strings.Builder
	at := func(s model.Source) string {
		if !s.FromTable {
			return " NOT-FROM-TABLE"
		}
		return fmt.Sprintf(" @%d", s.Pos.Line)
	}
	for _, s := range k.Services {
		var ports, lb []string
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				ports = append(ports, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol))
			} else {
				ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
			}
		}
		for _, i := range s.Status.LoadBalancer.Ingress {
			lb = append(lb, i.IP+i.Hostname)
		}
		fmt.Fprintf(&b, "Service %s/%s %s cip=%s ports=%s lb=%s ext=%s extname=%s sel=%s%s\n", s.Namespace, s.Name, s.Spec.Type,
			s.Spec.ClusterIP, strings.Join(ports, ","), strings.Join(lb, ","), strings.Join(s.Spec.ExternalIPs, ","),
			s.Spec.ExternalName, mapString(s.Spec.Selector), at(s.Source))
	}
	for _, p := range k.Pods {
		var restarts []string
		ready := 0
		for _, c := range p.Status.ContainerStatuses {
			restarts = append(restarts, fmt.Sprint(c.RestartCount))
			if c.Ready {
				ready++
			}
		}
		fmt.Fprintf(&b, "Pod %s/%s phase=%s reason=%s ready=%d/%d restarts=%s ip=%s node=%s nominated=%s%s\n", p.Namespace, p.Name,
			p.Status.Phase, p.Status.Reason, ready, len(p.Status.ContainerStatuses), strings.Join(restarts, ","),
			p.Status.PodIP, p.Spec.NodeName, p.Status.NominatedNodeName, at(p.Source))
	}
	for _, n := range k.Nodes {
		var conds, addrs []string
		for _, c := range n.Status.Conditions {
			conds = append(conds, string(c.Type)+"="+string(c.Status))
		}
		for _, a := range n.Status.Addresses {
			addrs = append(addrs, string(a.Type)+":"+a.Address)
		}
		i := n.Status.NodeInfo
		fmt.Fprintf(&b, "Node %s %s unschedulable=%v labels=%s kubelet=%s addrs=%s os=%q kernel=%s runtime=%s%s\n", n.Name,
			strings.Join(conds, ","), n.Spec.Unschedulable, mapString(n.Labels), i.KubeletVersion, strings.Join(addrs, ","),
			i.OSImage, i.KernelVersion, i.ContainerRuntimeVersion, at(n.Source))
	}
	for _, c := range k.ComponentStatuses {
		for _, cond := range c.Conditions {
			fmt.Fprintf(&b, "ComponentStatus %s %s=%s message=%q error=%q%s\n", c.Name, cond.Type, cond.Status, cond.Message, cond.Error, at(c.Source))
		}
	}
	for _, i := range k.Ingresses {
		class := "<nil>"
		if i.Spec.IngressClassName != nil {
			class = *i.Spec.IngressClassName
		}
		var hosts, lb []string
		for _, r := range i.Spec.Rules {
			hosts = append(hosts, r.Host)
		}
		for _, a := range i.Status.LoadBalancer.Ingress {
			lb = append(lb, a.IP+a.Hostname)
		}
		fmt.Fprintf(&b, "Ingress %s/%s class=%s hosts=%q tls=%d lb=%s%s\n", i.Namespace, i.Name, class,
			strings.Join(hosts, ","), len(i.Spec.TLS), strings.Join(lb, ","), at(i.Source))
	}
	for _, e := range k.Endpoints {
		var subsets []string
		for _, s := range e.Subsets {
			var ports, addrs []string
			for _, p := range s.Ports {
				ports = append(ports, fmt.Sprint(p.Port))
			}
			for _, a := range s.Addresses {
				if a.IP == "" {
					a.IP = "?"
				}
				addrs = append(addrs, a.IP)
			}
			if len(s.NotReadyAddresses) > 0 {
				addrs = append(addrs, fmt.Sprintf("notready*%d", len(s.NotReadyAddresses)))
			}
			subsets = append(subsets, strings.Join(ports, ",")+":"+strings.Join(addrs, ","))
		}
		fmt.Fprintf(&b, "Endpoints %s/%s %s%s\n", e.Namespace, e.Name, strings.Join(subsets, " "), at(e.Source))
	}
	return b.String()
}

func mapString(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

func readSeedTable(t *testing.T, name string) *model.Kube {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), "fixtures", "seeds", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := KubectlTable(f, filepath.Base(name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return k
}

func TestKubectlTableSeeds(t *testing.T) {
	for _, tt := range []struct{ name, want string }{{
		// "# kubectl get svc -A |grep :": no header; the NAMESPACE column
		// comes from -A, the columns from the cells.
		name: "002-synack-reset/svc.txt",
		want: `Service fe-node-online/bos-fe-xapi-node-online-1 LoadBalancer cip=10.23.137.123 ports=7071:35934/TCP lb=10.10.112.20 ext= extname= sel= @2
Service fe-node-online/bos-fe-xapi-node-online-2 LoadBalancer cip=10.23.227.91 ports=7071:28796/TCP lb=10.10.121.167 ext= extname= sel= @3
Service kube-system/kubernetes-dashboard NodePort cip=10.23.254.52 ports=443:36704/TCP lb= ext= extname= sel= @4
Service kube-system/traefik-ingress LoadBalancer cip=10.23.192.176 ports=80:32080/TCP,443:32443/TCP lb=10.10.249.145 ext= extname= sel= @5
Service kube-system/traefik-ingress2 LoadBalancer cip=10.23.209.239 ports=80:24855/TCP,443:35723/TCP lb=10.10.250.197 ext= extname= sel= @6
Service kube-system/traefik-ingress3 LoadBalancer cip=10.23.216.1 ports=80:37629/TCP,443:31221/TCP lb=10.10.250.174 ext= extname= sel= @7
Service kube-system/traefik-ingress4 LoadBalancer cip=10.23.214.152 ports=80:36321/TCP,443:24795/TCP lb=10.10.248.130 ext= extname= sel= @8
Service kube-system/traefik-ingress5 LoadBalancer cip=10.23.134.18 ports=80:21980/TCP,443:20869/TCP lb=10.10.250.119 ext= extname= sel= @9
`,
	}, {
		// No-break spaces from a web page, columns no longer aligned.
		name: "000-apiserver-affinity/cs.txt",
		want: `ComponentStatus controller-manager Healthy=False message="Get http://127.0.0.1:10252/healthz: dial tcp 127.0.0.1:10252: connect: connection refused" error="" @3
ComponentStatus scheduler Healthy=False message="Get http://127.0.0.1:10251/healthz: dial tcp 127.0.0.1:10251: connect: connection refused" error="" @4
ComponentStatus etcd-0 Healthy=True message="{\"health\":\"true\"}" error="" @5
ComponentStatus etcd-2 Healthy=True message="{\"health\":\"true\"}" error="" @6
ComponentStatus etcd-1 Healthy=True message="{\"health\":\"true\"}" error="" @7
`,
	}, {
		name: "001-probe-restart-loop/nodes.txt",
		want: `Node antidote-controller-4m3j Ready=True unschedulable=false labels=node-role.kubernetes.io/master= kubelet=v1.12.1 addrs= os="" kernel= runtime= @3
Node antidote-worker-3m7f Ready=True unschedulable=false labels= kubelet=v1.12.1 addrs= os="" kernel= runtime= @4
Node antidote-worker-3mcj Ready=True unschedulable=false labels= kubelet=v1.12.1 addrs= os="" kernel= runtime= @5
Node antidote-worker-gt5t Ready=True unschedulable=false labels= kubelet=v1.11.3 addrs= os="" kernel= runtime= @6
`,
	}, {
		// "~$ kubectl get pods -n=kube-system", then "...truncated".
		name: "001-probe-restart-loop/pods.txt",
		want: `Pod kube-system/coredns-78fcdf6894-8q7tg phase=Running reason= ready=1/1 restarts=0 ip= node= nominated= @3
Pod kube-system/coredns-78fcdf6894-wh5rc phase=Running reason= ready=1/1 restarts=1 ip= node= nominated= @4
Pod kube-system/etcd-antidote-controller-4m3j phase=Running reason= ready=1/1 restarts=183 ip= node= nominated= @5
Pod kube-system/kube-apiserver-antidote-controller-4m3j phase=Running reason= ready=1/1 restarts=183 ip= node= nominated= @6
Pod kube-system/kube-controller-manager-antidote-controller-4m3j phase=Running reason= ready=1/1 restarts=91 ip= node= nominated= @7
`,
	}, {
		// PORTS "80, 443" holds a space; the header is single-spaced.
		name: "003-lb-controller-conflict/ingress.txt",
		want: `Ingress ingress-nginx/default-tls class=nginx hosts="example.com" tls=1 lb=192.168.200.61,192.168.200.62,192.168.200.63,192.168.200.64 @2
Ingress minitoring/grafana class=nginx hosts="example.com" tls=1 lb=192.168.200.61,192.168.200.62,192.168.200.63,192.168.200.64 @3
Ingress webapp/webapp class=nginx hosts="example.com" tls=1 lb=192.168.200.61,192.168.200.62,192.168.200.63,192.168.200.64 @4
`,
	}, {
		name: "004-stale-dnat/svc-kube-dns.txt",
		want: "Service kube-system/kube-dns ClusterIP cip=10.178.64.10 ports=53/UDP,53/TCP lb= ext= extname= sel= @3\n",
	}, {
		// "... get endpoints kube-dns -o json | jq -r .subsets[0].addresses | jq length", then "77".
		name: "004-stale-dnat/endpoints-count.txt",
		want: "Endpoints kube-system/kube-dns :" + strings.Repeat("?,", 76) + "? @2\n",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			k := readSeedTable(t, tt.name)
			if got := tableSummary(k); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}

	// The positions and cells rules cite.
	k := readSeedTable(t, "002-synack-reset/svc.txt")
	np := k.NodePorts()
	if len(np) != 13 || np[2].Port != 36704 || np[2].Service != "kubernetes-dashboard" ||
		np[2].Pos.String() != "svc.txt:4 (Service kube-system/kubernetes-dashboard)" {
		t.Errorf("NodePorts %+v", np)
	}
	if c := k.Services[2].Source.Cells; c["AGE"] != "2y205d" || c["PORT(S)"] != "443:36704/TCP" || c["EXTERNAL-IP"] != "<none>" {
		t.Errorf("cells %v", c)
	}
	k = readSeedTable(t, "004-stale-dnat/endpoints-count.txt")
	if got := k.Endpoints[0].Source.Pos.String(); got != "endpoints-count.txt:2 (Endpoints kube-system/kube-dns)" {
		t.Errorf("count position %s", got)
	}
}

// The tables below are laid out as kubectl lays them out (text/tabwriter,
// minimum width 6, padding 3).

const nodesWide = `NAME                 STATUS                     ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE                         KERNEL-VERSION       CONTAINER-RUNTIME
kind-control-plane   Ready                      control-plane   58d   v1.30.0   172.18.0.2    <none>        Debian GNU/Linux 12 (bookworm)   6.8.0-45-generic     containerd://1.7.15
kind-worker          Ready,SchedulingDisabled   <none>          58d   v1.30.0   172.18.0.3    <none>        Debian GNU/Linux 12 (bookworm)   6.8.0-45-generic     containerd://1.7.15
kind-worker2         NotReady                   <none>          3d    v1.29.4   172.18.0.4    203.0.113.7   Ubuntu 22.04.4 LTS               5.15.0-101-generic   containerd://1.6.28
`

const svcWide = `NAME         TYPE           CLUSTER-IP   EXTERNAL-IP                 PORT(S)                      AGE      SELECTOR
kubernetes   ClusterIP      10.96.0.1    <none>                      443/TCP                      58d      <none>
db           ClusterIP      None         <none>                      5432/TCP                     12d      app=db
web          LoadBalancer   10.96.41.7   <pending>                   80:31080/TCP,443:31443/TCP   5h       app=web,tier=front
lb           LoadBalancer   10.96.41.8   203.0.113.10,203.0.113.11   8080:30080/TCP               5h       app=lb
elb          LoadBalancer   10.96.41.9   a1b2c3d4e5f6a7...           80:30081/TCP                 5h       app=elb
legacy       ExternalName   <none>       db.example.com              <none>                       2y205d   <none>
dns          NodePort       10.96.0.10   192.0.2.5                   53:30053/UDP,53:30053/TCP    666d     k8s-app=kube-dns
`

const epCSIngress = `$ kubectl get endpoints -n kube-system
NAME         ENDPOINTS                                                 AGE
kube-dns     10.244.0.2:53,10.244.0.3:53,10.244.0.2:9153 + 3 more...   58d
kubernetes   172.18.0.2:6443                                           58d
web          <none>                                                    5h

$ kubectl get cs
Warning: v1 ComponentStatus is deprecated in v1.19+
NAME                 STATUS      MESSAGE                         ERROR
scheduler            Unhealthy                                   Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused
controller-manager   Healthy     ok                              
etcd-0               Healthy     {"health":"true","reason":""}   

$ kubectl get ing -n shop
NAME   HOSTS                                                                          ADDRESS                                           PORTS     AGE
shop   shop.example.com,api.example.com,img.example.com,cdn.example.com + 2 more...   k8s-shop-1234567890.eu-west-1.elb.amazonaws.com   80        12d
any    *                                                                                                                                80, 443   3m
`

func TestKubectlTableAligned(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{{
		name: "pods -A -o wide",
		in:   parsetest.PodsWide,
		want: `Pod kube-system/coredns-5d78c9869d-8xk2p phase=Running reason= ready=1/1 restarts=0 ip=10.244.0.3 node=kind-control-plane nominated= @3
Pod kube-system/etcd-kind-control-plane phase=Running reason= ready=1/1 restarts=183 ip=172.18.0.2 node=kind-control-plane nominated= @4
Pod shop/web-7d4b9c8f6-abcde phase= reason=CrashLoopBackOff ready=1/2 restarts=12,0 ip= node= nominated= @5
Pod shop/db-0 phase= reason=Init:0/1 ready=0/1 restarts=0 ip=10.244.1.9 node=kind-worker nominated=kind-worker2 @6
`,
	}, {
		name: "nodes -o wide",
		in:   nodesWide,
		want: `Node kind-control-plane Ready=True unschedulable=false labels=node-role.kubernetes.io/control-plane= kubelet=v1.30.0 addrs=InternalIP:172.18.0.2 os="Debian GNU/Linux 12 (bookworm)" kernel=6.8.0-45-generic runtime=containerd://1.7.15 @2
Node kind-worker Ready=True unschedulable=true labels= kubelet=v1.30.0 addrs=InternalIP:172.18.0.3 os="Debian GNU/Linux 12 (bookworm)" kernel=6.8.0-45-generic runtime=containerd://1.7.15 @3
Node kind-worker2 Ready=False unschedulable=false labels= kubelet=v1.29.4 addrs=InternalIP:172.18.0.4,ExternalIP:203.0.113.7 os="Ubuntu 22.04.4 LTS" kernel=5.15.0-101-generic runtime=containerd://1.6.28 @4
`,
	}, {
		name: "svc -o wide",
		in:   svcWide,
		want: `Service /kubernetes ClusterIP cip=10.96.0.1 ports=443/TCP lb= ext= extname= sel= @2
Service /db ClusterIP cip=None ports=5432/TCP lb= ext= extname= sel=app=db @3
Service /web LoadBalancer cip=10.96.41.7 ports=80:31080/TCP,443:31443/TCP lb= ext= extname= sel=app=web,tier=front @4
Service /lb LoadBalancer cip=10.96.41.8 ports=8080:30080/TCP lb=203.0.113.10,203.0.113.11 ext= extname= sel=app=lb @5
Service /elb LoadBalancer cip=10.96.41.9 ports=80:30081/TCP lb= ext= extname= sel=app=elb @6
Service /legacy ExternalName cip= ports= lb= ext= extname=db.example.com sel= @7
Service /dns NodePort cip=10.96.0.10 ports=53:30053/UDP,53:30053/TCP lb= ext=192.0.2.5 extname= sel=k8s-app=kube-dns @8
`,
	}, {
		name: "endpoints, cs, ingress",
		in:   epCSIngress,
		want: `ComponentStatus scheduler Healthy=False message="" error="Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused" @10
ComponentStatus controller-manager Healthy=True message="ok" error="" @11
ComponentStatus etcd-0 Healthy=True message="{\"health\":\"true\",\"reason\":\"\"}" error="" @12
Ingress shop/shop class=<nil> hosts="shop.example.com,api.example.com,img.example.com,cdn.example.com" tls=0 lb=k8s-shop-1234567890.eu-west-1.elb.amazonaws.com @16
Ingress shop/any class=<nil> hosts="" tls=1 lb= @17
Endpoints kube-system/kube-dns 53:10.244.0.2,10.244.0.3 9153:10.244.0.2,?,?,? @3
Endpoints kube-system/kubernetes 6443:172.18.0.2 @4
Endpoints kube-system/web  @5
`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := KubectlTable(strings.NewReader(tt.in), "t.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got := tableSummary(k); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}

	k, _ := KubectlTable(strings.NewReader(parsetest.PodsWide), "pods.txt")
	if c := k.Pods[1].Source.Cells; c["RESTARTS"] != "183 (5m ago)" || c["NOMINATED NODE"] != "<none>" || c["READINESS GATES"] != "<none>" {
		t.Errorf("cells %v", c)
	}
	if got := k.Pods[1].Source.Pos.String(); got != "pods.txt:4 (Pod kube-system/etcd-kind-control-plane)" {
		t.Errorf("pos %s", got)
	}
}

// The same tables with their spaces collapsed (as chat tools and web pages
// paste them) give the same objects: the cells are told apart by shape.
func TestKubectlTableCollapsed(t *testing.T) {
	for _, in := range []string{parsetest.PodsWide, nodesWide, svcWide, epCSIngress} {
		var b strings.Builder
		for _, line := range strings.Split(in, "\n") {
			b.WriteString(text.CollapseSpace(line) + "\n")
		}
		want, err := KubectlTable(strings.NewReader(in), "t.txt")
		if err != nil {
			t.Fatal(err)
		}
		got, err := KubectlTable(strings.NewReader(b.String()), "t.txt")
		if err != nil {
			t.Errorf("collapsed: %v", err)
		}
		// The cs row whose MESSAGE is empty: collapsed, the text is read as
		// the ERROR of an Unhealthy component, as kubectl prints it.
		if g, w := tableSummary(got), tableSummary(want); g != w {
			t.Errorf("collapsed\n%s\naligned\n%s", g, w)
		}
	}
}

func TestKubectlTableWithoutHeader(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{{
		name: "pod rows cut out with grep, kind from the cells",
		in: "kube-system   etcd-m1   1/1     Running   183 (5m ago)   58d\n" +
			"etcd-m2 0/1 CrashLoopBackOff 7 2d 10.0.0.12 m2 <none> <none>\n",
		want: `Pod kube-system/etcd-m1 phase=Running reason= ready=1/1 restarts=183 ip= node= nominated= @1
Pod /etcd-m2 phase= reason=CrashLoopBackOff ready=0/1 restarts=7 ip=10.0.0.12 node=m2 nominated= @2
`,
	}, {
		name: "node and endpoints rows",
		in:   "m1 Ready control-plane,master 65d v1.12.1\nkube-dns 10.244.0.2:53 3d\n",
		want: `Node m1 Ready=True unschedulable=false labels=node-role.kubernetes.io/control-plane=,node-role.kubernetes.io/master= kubelet=v1.12.1 addrs= os="" kernel= runtime= @1
Endpoints /kube-dns 53:10.244.0.2 @2
`,
	}, {
		name: "--no-headers with the namespace of -n",
		in:   "$ kubectl -n kube-system get svc --no-headers\nkube-dns ClusterIP 10.96.0.10 <none> 53/UDP,53/TCP 58d\n",
		want: "Service kube-system/kube-dns ClusterIP cip=10.96.0.10 ports=53/UDP,53/TCP lb= ext= extname= sel= @2\n",
	}, {
		name: "kubectl get svc,ep: kind/name and a table per kind",
		in: "$ kubectl get svc,ep -n kube-system\n" +
			"NAME               TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)                  AGE\n" +
			"service/kube-dns   ClusterIP   10.96.0.10   <none>        53/UDP,53/TCP,9153/TCP   58d\n" +
			"\n" +
			"NAME                 ENDPOINTS                                               AGE\n" +
			"endpoints/kube-dns   10.244.0.2:53,10.244.0.3:53,10.244.0.2:9153 + 3 more...   58d\n",
		want: `Service kube-system/kube-dns ClusterIP cip=10.96.0.10 ports=53/UDP,53/TCP,9153/TCP lb= ext= extname= sel= @3
Endpoints kube-system/kube-dns 53:10.244.0.2,10.244.0.3 9153:10.244.0.2,?,?,? @6
`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := KubectlTable(strings.NewReader(tt.in), "t.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got := tableSummary(k); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// The layout's command (a Rancher log collector's kubectl/pods file) gives
// the kind and namespace of rows without a header.
func TestKubeTableFormatCommand(t *testing.T) {
	src := &format.File{Name: "kubectl/pods", Node: "n1", Command: "kubectl get pods -n kube-system --no-headers"}
	var snap model.Snapshot
	n, err := KubectlTableFormat.Parse(t.Context(), strings.NewReader("etcd-m1 1/1 Running 3 5d\n"), src, &snap)
	if err != nil || n != 1 {
		t.Fatalf("%d objects, %v", n, err)
	}
	p := snap.Kube.Pods[0]
	if p.Namespace != "kube-system" || p.Source.Node != "n1" || src.Details["Pod"] != 1 {
		t.Errorf("pod %s/%s node %q details %v", p.Namespace, p.Name, p.Source.Node, src.Details)
	}
}

func TestKubectlTableErrors(t *testing.T) {
	in := `NAME      READY   STATUS    RESTARTS   AGE
web-1     1/1     Running   0          5d
web-2     one     Running   0          5d
web-3     1/1     Running   0          5d

NAME      READY   UP-TO-DATE   AVAILABLE   AGE
coredns   2/2     2            2           58d

kube-dns ClusterIP 10.96.0.10 <none> 53:99999/UDP 58d
some words that are no table row
$ kubectl get deploy -n kube-system --no-headers
coredns   2/2     2            2           58d
metrics   1/1     1            1           58d
`
	k, err := KubectlTable(strings.NewReader(in), "bad.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 5 {
		t.Fatalf("errors %v, want 5", err)
	}
	for i, want := range []string{
		`bad.txt:3: syntax error: expected a row of the Pod table (NAME, READY, STATUS, RESTARTS, AGE) ("web-2     one     Running   0          5d")`,
		`bad.txt:6: kubectl table of a kind not read (columns NAME, READY, UP-TO-DATE, AVAILABLE, AGE): its rows are skipped ("NAME      READY   UP-TO-DATE   AVAILABLE   AGE")`,
		`bad.txt:9: bad value: NodePort "53:99999/UDP" in PORT(S): want 1-65535 ("kube-dns ClusterIP 10.96.0.10 <none> 53:99999/UDP 58d")`,
		`bad.txt:10: syntax error: expected a kubectl get table: a header (NAME ...) or a row of services, pods, nodes, componentstatuses, ingresses or endpoints ("some words that are no table row")`,
		`bad.txt:12: kubectl get deploy: a kind not read: its rows are skipped ("coredns   2/2     2            2           58d")`,
	} {
		if got := list[i].Error(); got != want {
			t.Errorf("error %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if !errors.Is(list[0], format.ErrSyntax) || !errors.Is(list[2], format.ErrValue) {
		t.Errorf("sentinels: %v", list)
	}
	want := `Service /kube-dns ClusterIP cip=10.96.0.10 ports= lb= ext= extname= sel= @9
Pod /web-1 phase=Running reason= ready=1/1 restarts=0 ip= node= nominated= @2
Pod /web-3 phase=Running reason= ready=1/1 restarts=0 ip= node= nominated= @4
`
	if got := tableSummary(k); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

const klogLines = `I0915 19:09:04.534948  607529 prober.go:121] "Probe failed" probeType="Readiness" pod="default/nginx-5dfb7c896c-x2q2w"
E0126 20:40:24.739255       1 reflector.go:153] k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Service
`

func TestSniffKubeTable(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"pods wide", parsetest.PodsWide, true},
		{"nodes wide", nodesWide, true},
		{"svc wide", svcWide, true},
		{"ep cs ing", epCSIngress, true},
		{"grep'd svc rows", "kube-system kubernetes-dashboard NodePort 10.23.254.52 <none> 443:36704/TCP 2y205d\n", true},
		{"jq length", "kubectl -n kube-system get endpoints kube-dns -o json | jq '.subsets[0].addresses' | jq length\n77\n", true},
		{"klog", klogLines, false},
		{"journald klog", "Dec 04 20:59:24 m1 kubelet[23953]: I1204 20:59:24.234181 23953 kuberuntime_manager.go:513] Container is dead\n", false},
		{"nginx access", `10.23.77.129 - - [15/Sep/2022:11:08:42 +0000] "GET / HTTP/1.1" 200 615 "-" "kube-probe/1.23" "-"` + "\n", false},
		{"etcd", "2018-12-04 22:47:14.729606 I | embed: serving client requests on 127.0.0.1:2379\n", false},
		{"ipvsadm", parsetest.IPVSListing, false},
		{"sysctl", "net.ipv4.ip_local_port_range = 1024 65000\n", false},
		{"docker ps", "CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES\n3f1c2b9d8e7a   nginx   \"nginx\"   2 hours ago   Up 2 hours      web\n", false},
		{"describe", "Name:         kube-dns\nNamespace:    kube-system\nLabels:       k8s-app=kube-dns\n", false},
		{"deployments only", "NAME      READY   UP-TO-DATE   AVAILABLE   AGE\ncoredns   2/2     2            2           58d\n", false},
		{"binary", "NAME\x00READY", false},
	} {
		got := sniffKubeTable("x", []byte(tt.in))
		if (got >= 50) != tt.want {
			t.Errorf("%s: score %d, want high=%v", tt.name, got, tt.want)
		}
		if !tt.want && got != 0 {
			t.Errorf("%s: score %d, want 0", tt.name, got)
		}
	}
}

func FuzzKubectlTable(f *testing.F) {
	f.Add(parsetest.PodsWide)
	f.Add(nodesWide)
	f.Add(svcWide)
	f.Add(epCSIngress)
	f.Add("# kubectl get svc -A |grep :\nkube-system kubernetes-dashboard NodePort 10.23.254.52 <none> 443:36704/TCP 2y205d\n")
	f.Add("kubectl -n kube-system get endpoints kube-dns -o json | jq .subsets[0].addresses | jq length\n77\n")
	f.Add("scheduler            Unhealthy   Get http://127.0.0.1:10251/healthz: dial tcp 127.0.0.1:10251: connect: connection refused\netcd-0   Healthy   {\"health\":\"true\"}\n")
	f.Fuzz(func(t *testing.T, in string) {
		k, err := KubectlTable(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, s := range k.Services {
			if s.Source.Pos.Line == 0 || !s.Source.FromTable {
				t.Fatalf("service without a line: %+v", s.Source)
			}
		}
		for _, p := range k.Pods {
			if p.Source.Pos.Line == 0 || len(p.Status.ContainerStatuses) > 64 {
				t.Fatalf("pod %+v", p.Source)
			}
		}
		_ = sniffKubeTable("fuzz.txt", []byte(in))
	})
}

// A terminal session from the shared corpus: kubectl tables between other
// commands' output. The tables are read; the rest is reported line by line.
func TestKubectlTableCorpusSession(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "logs")
	f, err := os.Open(filepath.Join(dir, "inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := KubectlTable(f, "session.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("errors %v: the YAML and nslookup output around the tables should be reported", err)
	}
	// "kubectl get endpoints" prints 53/UDP and 53/TCP as two runs of port
	// 53: 10.1.0.20:53,10.1.0.21:53,10.1.0.20:53 + 3 more...
	want := `Service kube-system/kube-dns ClusterIP cip=10.96.0.10 ports=53/UDP,53/TCP,9153/TCP lb= ext= extname= sel= @43
Pod /dnsutils phase=Running reason= ready=1/1 restarts=0 ip= node= nominated= @21
Pod kube-system/coredns-7db6d8ff4d-7kb9x phase=Running reason= ready=1/1 restarts=2 ip= node= nominated= @36
Pod kube-system/coredns-7db6d8ff4d-gkp5z phase=Running reason= ready=1/1 restarts=2 ip= node= nominated= @37
Endpoints kube-system/kube-dns 53:10.1.0.20,10.1.0.21 53:10.1.0.20,?,?,? @47
`
	if got := tableSummary(k); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := k.Pods[1].Source.Cells["RESTARTS"]; got != "2 (131m ago)" {
		t.Errorf("RESTARTS cell %q", got)
	}
}
