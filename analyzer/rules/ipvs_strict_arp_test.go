package rules_test

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
)

// kubeProxyConfigMap is `kubectl -n kube-system get cm kube-proxy -o yaml`
// on a kubeadm cluster, with the mode and strictARP of each case.
func kubeProxyConfigMap(mode, strictARP string) string {
	return `apiVersion: v1
data:
  config.conf: |-
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    bindAddress: 0.0.0.0
    clientConnection:
      kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
    clusterCIDR: 10.244.0.0/16
    configSyncPeriod: 0s
    ipvs:
      excludeCIDRs: null
      minSyncPeriod: 0s
      scheduler: ""
      strictARP: ` + strictARP + `
      syncPeriod: 0s
    kind: KubeProxyConfiguration
    mode: "` + mode + `"
    nodePortAddresses: null
  kubeconfig.conf: |-
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        server: https://192.168.200.60:6443
      name: default
kind: ConfigMap
metadata:
  labels:
    app: kube-proxy
  name: kube-proxy
  namespace: kube-system
`
}

const metallbSpeaker = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: speaker
  namespace: metallb-system
spec:
  selector:
    matchLabels:
      app: metallb
  template:
    metadata:
      labels:
        app: metallb
    spec:
      containers:
      - name: speaker
        image: quay.io/metallb/speaker:v0.14.8
---
apiVersion: v1
kind: Service
metadata:
  name: ingress-nginx-controller
  namespace: ingress-nginx
spec:
  type: LoadBalancer
  ports:
  - port: 443
    targetPort: 443
status:
  loadBalancer:
    ingress:
    - ip: 192.168.200.99
`

func strictARPFindings(t *testing.T, files map[string]string) []analyzer.Finding {
	t.Helper()
	return runOnFiles(t, rules.IPVSStrictARP, files).Findings
}

func TestIPVSStrictARP(t *testing.T) {
	// Two nodes' neighbor tables resolve the LoadBalancer IP to two MACs.
	neigh := "root@node1:~# ip neigh\n192.168.200.99 dev enp0s25 lladdr 00:22:4d:a8:ba:4c REACHABLE\n" +
		"root@node3:~# ip neigh\n192.168.200.99 dev enp0s25 lladdr 00:22:4d:a8:bb:01 STALE\n"
	f := strictARPFindings(t, map[string]string{"kube-proxy.yaml": kubeProxyConfigMap("ipvs", "false"),
		"metallb.yaml": metallbSpeaker, "neigh.txt": neigh})
	if len(f) != 1 || f[0].Severity != analyzer.Error {
		t.Fatalf("findings %+v", f)
	}
	var ev []string
	for _, e := range f[0].Evidence {
		ev = append(ev, e.String())
	}
	want := []string{
		"kube-proxy.yaml:1 (ConfigMap kube-system/kube-proxy) (ConfigMap kube-system/kube-proxy config.conf: mode ipvs, strictARP is false)",
		"metallb.yaml:1 (DaemonSet metallb-system/speaker) (MetalLB runs: speaker)",
		"neigh.txt:2 (192.168.200.99 is at 00:22:4d:a8:ba:4c)",
		"neigh.txt:4 (192.168.200.99 is at 00:22:4d:a8:bb:01)",
	}
	if strings.Join(ev, "\n") != strings.Join(want, "\n") {
		t.Errorf("evidence:\n%s\nwant:\n%s", strings.Join(ev, "\n"), strings.Join(want, "\n"))
	}
	if fl, _ := f[0].Facts["flapping_ips"].([]string); len(fl) != 1 || fl[0] != "192.168.200.99 (ingress-nginx/ingress-nginx-controller): 2 MACs" {
		t.Errorf("flapping %v", f[0].Facts["flapping_ips"])
	}

	// strictARP on, or the iptables mode: nothing to say.
	for _, cm := range []string{kubeProxyConfigMap("ipvs", "true"), kubeProxyConfigMap("iptables", "false")} {
		if f := strictARPFindings(t, map[string]string{"kube-proxy.yaml": cm, "metallb.yaml": metallbSpeaker, "neigh.txt": neigh}); len(f) != 0 {
			t.Errorf("findings %+v", f)
		}
	}
	// IPVS without a controller that announces with ARP: nothing either.
	if f := strictARPFindings(t, map[string]string{"kube-proxy.yaml": kubeProxyConfigMap("ipvs", "false")}); len(f) != 0 {
		t.Errorf("findings without MetalLB %+v", f)
	}

	// kubespray's inventory alone: IPVS, MetalLB, strict ARP left to its
	// default (off).
	f = strictARPFindings(t, map[string]string{"k8s-cluster.yml": "kube_proxy_mode: ipvs\nkube_network_plugin: calico\nmetallb_enabled: true\n"})
	if len(f) != 1 || f[0].Severity != analyzer.Warning || !strings.Contains(f[0].Summary, "strictARP is not set") {
		t.Fatalf("kubespray findings %+v", f)
	}
	if got := f[0].Evidence[0].String(); got != "k8s-cluster.yml:1 (kubespray's kube_proxy_mode: mode ipvs, strictARP is not set (off by default))" {
		t.Errorf("evidence %s", got)
	}
}
