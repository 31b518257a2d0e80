package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// The evidence of seed 001, built by hand: the etcd mirror pod restarted
// 183 times, the static pod manifest with its probe, a container that exited
// with status 0, and etcd's log ending on a terminated signal.
func seed001(withKill bool) *model.Snapshot {
	s := &model.Snapshot{}
	mirror := model.Pod{}
	mirror.ObjectMeta = metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-antidote-controller-4m3j"}
	mirror.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 183}}
	mirror.Source = model.Source{Pos: model.Pos{File: "pods.txt", Line: 5}, FromTable: true}
	manifest := model.Pod{}
	manifest.ObjectMeta = metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd"}
	manifest.Spec.Containers = []corev1.Container{{Name: "etcd", Image: "k8s.gcr.io/etcd:3.2.24", LivenessProbe: &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-ec", "etcdctl get foo"}}},
		InitialDelaySeconds: 15, TimeoutSeconds: 15, FailureThreshold: 8}}}
	manifest.Source = model.Source{Pos: model.Pos{File: "etcd.yaml", Line: 1, Object: "Pod kube-system/etcd"}}
	s.Kube.Pods = []model.Pod{mirror, manifest}
	s.Inputs = append(s.Inputs, model.Input{Path: "pods.txt", Kind: model.KindKube})
	if withKill {
		s.Containers = []model.Container{{KubeContainer: "etcd", Pod: "etcd-antidote-controller-zk2x", Namespace: "kube-system",
			State: "exited", ExitCode: 0, Attempt: 0, Pos: model.Pos{File: "docker-ps-a.txt", Line: 4}}}
		t0 := time.Date(2018, 12, 4, 22, 47, 14, 729606000, time.UTC)
		s.Logs = []model.LogEvent{
			{Source: "etcd", Time: t0, Message: "embed: serving client requests on 127.0.0.1:2379", Pos: model.Pos{File: "etcd.log", Line: 1}},
			{Source: "etcd", Time: t0.Add(91*time.Second + 321*time.Millisecond), Message: "pkg/osutil: received terminated signal, shutting down...", Pos: model.Pos{File: "etcd.log", Line: 2}},
		}
	}
	return s
}

func TestProbeRestartLoop(t *testing.T) {
	f := run1(t, ProbeRestartLoop, seed001(false))
	if len(f) != 1 || f[0].Severity != analyzer.Warning {
		t.Fatalf("restarts and probe alone: %+v", f)
	}
	f = run1(t, ProbeRestartLoop, seed001(true))
	if len(f) != 1 || f[0].Severity != analyzer.Error {
		t.Fatalf("with the clean kills: %+v", f)
	}
	facts := f[0].Facts
	if facts["restarts"] != int32(183) || facts["probe_window_s"] != 135 || facts["failing_window_s"] != 120 || facts["exit_code"] != 0 {
		t.Errorf("facts %v", facts)
	}
	if run, ok := facts["observed_run"].([]string); !ok || len(run) != 1 || run[0] != "1m31s" {
		t.Errorf("observed run %v", facts["observed_run"])
	}
	want := []string{"pods.txt:5", "etcd.yaml:1 (Pod kube-system/etcd)", "docker-ps-a.txt:4", "etcd.log:2", "etcd.log:1"}
	if got := evStrings(f[0].Evidence); len(got) != len(want) {
		t.Errorf("evidence %v, want %v", got, want)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("evidence %d: %s, want %s", i, got[i], want[i])
			}
		}
	}
	// Few restarts: nothing to say.
	s := seed001(true)
	s.Kube.Pods[0].Status.ContainerStatuses[0].RestartCount = 2
	if f := run1(t, ProbeRestartLoop, s); len(f) != 0 {
		t.Errorf("2 restarts reported: %+v", f)
	}
}

func TestVersionSkew(t *testing.T) {
	node := func(name, v string, line int) model.Node {
		n := model.Node{}
		n.Name = name
		n.Status.NodeInfo.KubeletVersion = v
		n.Source.Pos = model.Pos{File: "nodes.txt", Line: line}
		return n
	}
	s := &model.Snapshot{Inputs: []model.Input{{Path: "nodes.txt", Kind: model.KindKube}}}
	s.Kube.Nodes = []model.Node{node("antidote-controller-4m3j", "v1.12.1", 3), node("antidote-worker-3m7f", "v1.12.1", 4),
		node("antidote-worker-3mcj", "v1.12.1", 5), node("antidote-worker-gt5t", "v1.11.3", 6)}
	f := run1(t, VersionSkew, s)
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Title != "kubelet versions differ: antidote-worker-gt5t (v1.11.3) against v1.12 on the other nodes" {
		t.Fatalf("%+v", f)
	}
	if ev := evStrings(f[0].Evidence); len(ev) != 1 || ev[0] != "nodes.txt:6" {
		t.Errorf("evidence %v", ev)
	}
	// A kubelet newer than the apiserver breaks the policy.
	api := model.Pod{}
	api.Spec.Containers = []corev1.Container{{Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.11.5"}}
	api.Source.Pos = model.Pos{File: "kube-apiserver.yaml", Line: 1}
	s.Kube.Pods = append(s.Kube.Pods, api)
	s.Inputs = append(s.Inputs, model.Input{Path: "kube-apiserver.yaml", Kind: model.KindComponents})
	if f := run1(t, VersionSkew, s); len(f) != 1 || f[0].Severity != analyzer.Error {
		t.Fatalf("policy: %+v", f)
	}
	// The version the apiserver reported tells the broken policy too,
	// evidence of the same kind as the Nodes (kube), so a warning.
	s.Kube.Pods = nil
	s.ServerVersions = []model.ServerVersion{{GitVersion: "v1.11.5", Pos: model.Pos{File: "cluster_version.json", Line: 5}}}
	if f := run1(t, VersionSkew, s); len(f) != 1 || f[0].Facts["apiserver"] != "v1.11.5" || f[0].Facts["policy_broken"] == nil ||
		!slices.Contains(evStrings(f[0].Evidence), "cluster_version.json:5") {
		t.Fatalf("policy from the reported version: %+v", f)
	}
	s.ServerVersions = nil
	// All alike: nothing.
	s.Kube.Nodes = s.Kube.Nodes[:3]
	if f := run1(t, VersionSkew, s); len(f) != 0 {
		t.Errorf("same versions reported: %+v", f)
	}
}

func TestKubeProxySyncErrors(t *testing.T) {
	t0 := time.Date(0, 1, 26, 20, 40, 24, 739255000, time.UTC)
	ev := func(line int, d time.Duration, msg string) model.LogEvent {
		return model.LogEvent{Source: "reflector.go:153", Level: "E", Time: t0.Add(d), Message: msg, Pos: model.Pos{File: "kube-proxy.log", Line: line}}
	}
	s := &model.Snapshot{Inputs: []model.Input{{Path: "kube-proxy.log", Kind: model.KindLogs}}}
	s.Logs = []model.LogEvent{
		ev(2, 0, "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Service: an error on the server (\"\") has prevented the request from succeeding (get services)"),
		ev(3, 0, "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Endpoints: an error on the server (\"\") has prevented the request from succeeding (get endpoints)"),
		ev(4, 10*time.Second, "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Service: an error on the server"),
		{Source: "proxier.go:1164", Message: "SyncProxyRules complete", Pos: model.Pos{File: "kube-proxy.log", Line: 1}},
	}
	f := run1(t, KubeProxySyncErrors, s)
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["errors"] != 3 {
		t.Fatalf("%+v", f)
	}
	if k := f[0].Facts["resources"].([]string); len(k) != 2 || k[0] != "Service" || k[1] != "Endpoints" {
		t.Errorf("resources %v", k)
	}
	if f[0].Facts["first"] != "Jan 26 20:40:24.739255" || f[0].Facts["last"] != "Jan 26 20:40:34.739255" {
		t.Errorf("first %v last %v", f[0].Facts["first"], f[0].Facts["last"])
	}
	var notes []string
	for _, e := range f[0].Evidence {
		notes = append(notes, e.Note)
	}
	if want := "[kube-proxy cannot list Services kube-proxy cannot list Endpoints kube-proxy cannot list Services]"; fmt.Sprint(notes) != want {
		t.Errorf("notes %v, want %s", notes, want)
	}
	s.Inputs = append(s.Inputs, model.Input{Path: "iptables-save.txt", Kind: model.KindNetfilter})
	if f := run1(t, KubeProxySyncErrors, s); len(f) != 1 || f[0].Severity != analyzer.Error {
		t.Fatalf("with the dataplane: %+v", f)
	}
}

func TestTimeWaitChurn(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "ss.txt", Kind: model.KindSockets}}}
	s.SockCounts = []model.SocketCount{
		{Proto: "tcp", State: "TIME-WAIT", Local: netip.MustParseAddr("10.23.77.129"), Count: 849, Pos: model.Pos{File: "ss.txt", Line: 3}},
		{Proto: "tcp", State: "TIME-WAIT", Local: netip.MustParseAddr("10.0.0.9"), Count: 12, Pos: model.Pos{File: "ss.txt", Line: 4}},
	}
	f := run1(t, TimeWaitChurn, s)
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["timewait_sockets"] != 849 || f[0].Facts["connections_per_s"] != "14.2" {
		t.Fatalf("sockets alone: %+v", f)
	}
	// With the range and an owned NodePort in the overlap: the churn lands on it.
	withSysctls(s, sysctl("net.ipv4.ip_local_port_range", "1024 65000", 1))
	withIPVS(s, "10.10.85.235:31080", 7)
	f = run1(t, TimeWaitChurn, s)
	if len(f) != 1 || f[0].Severity != analyzer.Error || f[0].Facts["range_cycle"] != "1h15m21s" || f[0].Facts["owned_ports_in_range"] != 1 {
		t.Fatalf("joined: %+v", f)
	}
	// Below the threshold: nothing.
	s.SockCounts[0].Count = 40
	if f := run1(t, TimeWaitChurn, s); len(f) != 0 {
		t.Errorf("40 sockets reported: %+v", f)
	}
}

// MetalLB's controller updating Services while kubespray deploys kube-vip
// with its services mode on: the controllers fight, without a Service in
// the bundle. MetalLB alone is no finding.
func TestLBControllerConflictFromControllers(t *testing.T) {
	t0 := time.Date(2024, 6, 5, 22, 35, 17, 0, time.UTC)
	snap := func(kubeVIP bool) *model.Snapshot {
		s := &model.Snapshot{Inputs: []model.Input{{Path: "metallb.log", Kind: model.KindLogs}}}
		for i, svc := range []string{"a/web", "b/api", "a/web"} {
			s.Logs = append(s.Logs,
				model.LogEvent{Source: "metallb-controller", Time: t0.Add(time.Duration(i) * 5 * time.Second), Fields: map[string]string{"start reconcile": svc}, Pos: model.Pos{File: "metallb.log", Line: 2*i + 1}},
				model.LogEvent{Source: "metallb-controller", Time: t0.Add(time.Duration(i) * 5 * time.Second), Message: "updated service object", Fields: map[string]string{"event": "serviceUpdated"}, Pos: model.Pos{File: "metallb.log", Line: 2*i + 2}})
		}
		if kubeVIP {
			s.Inputs = append(s.Inputs, model.Input{Path: "k8s-cluster.yml", Kind: model.KindSettings})
			s.Settings = []model.Setting{
				{Pos: model.Pos{File: "k8s-cluster.yml", Line: 3}, Tool: "kubespray", Key: "kube_vip_enabled", Value: "true"},
				{Pos: model.Pos{File: "k8s-cluster.yml", Line: 9}, Tool: "kubespray", Key: "kube_vip_services_enabled", Value: "true"},
			}
		}
		return s
	}
	if f := run1(t, LBControllerConflict, snap(false)); len(f) != 0 {
		t.Errorf("MetalLB alone: %+v", f)
	}
	f := run1(t, LBControllerConflict, snap(true))
	if len(f) != 1 || f[0].Severity != analyzer.Error {
		t.Fatalf("findings %+v", f)
	}
	if f[0].Facts["service_updates"] != 3 || f[0].Facts["kube_vip_services"] != true ||
		fmt.Sprint(f[0].Facts["services_updated"]) != "[a/web b/api]" {
		t.Errorf("facts %v", f[0].Facts)
	}
	want := "k8s-cluster.yml:9 k8s-cluster.yml:3 metallb.log:2 metallb.log:4 metallb.log:6"
	if got := strings.Join(evStrings(f[0].Evidence), " "); got != want {
		t.Errorf("evidence %s, want %s", got, want)
	}
	if !strings.Contains(f[0].Summary, "3 times in 10s") {
		t.Errorf("summary %q", f[0].Summary)
	}
}
