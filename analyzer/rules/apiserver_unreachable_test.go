package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// A CoreDNS log timing out on the ClusterIP, a kubelet refused on the
// apiserver's address (its URL in the err field), and lines the rule must
// leave alone.
func apiUnreachableSnap() *model.Snapshot {
	t0 := time.Date(2024, 10, 8, 18, 9, 45, 24000000, time.UTC)
	pos := func(f string, l int) model.Pos { return model.Pos{File: f, Line: l} }
	s := &model.Snapshot{Inputs: []model.Input{{Path: "coredns.log", Kind: model.KindLogs}}}
	s.Logs = []model.LogEvent{
		{Source: "coredns", Level: "INFO", Time: t0, Pos: pos("coredns.log", 1),
			Message: `pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: failed to list *v1.Service: Get "https://10.96.0.1:443/api/v1/services?limit=500&resourceVersion=0": dial tcp 10.96.0.1:443: i/o timeout`},
		// A trace repeats the error: not counted again.
		{Source: "coredns", Level: "INFO", Time: t0, Pos: pos("coredns.log", 2),
			Message: "Trace[989619704]: \"Reflector ListAndWatch\" (total time: 30007ms):\nTrace[989619704]: ---\"Objects listed\" error:Get \"https://10.96.0.1:443/api/v1/services\": dial tcp 10.96.0.1:443: i/o timeout 30004ms"},
		{Source: "coredns", Level: "ERROR", Time: t0.Add(30 * time.Second), Pos: pos("coredns.log", 5),
			Message: `pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: Failed to watch *v1.EndpointSlice: failed to list *v1.EndpointSlice: Get "https://10.96.0.1:443/apis/discovery.k8s.io/v1/endpointslices?limit=500&resourceVersion=0": dial tcp 10.96.0.1:443: i/o timeout`},
		// Not the apiserver, not a network failure.
		{Source: "coredns", Level: "ERROR", Pos: pos("coredns.log", 6), Message: `2 example.com. A: read udp 10.1.0.20:41000->8.8.8.8:53: i/o timeout`},
		{Source: "app", Pos: pos("app.log", 1), Message: `Get "https://shop.example.com/cart": dial tcp 10.0.0.9:443: i/o timeout`},
		{Source: "app", Pos: pos("app.log", 2), Message: `Failed to list *v1.Pod: the server has asked for the client to provide credentials (get pods)`},
		// The apiserver calling an aggregated API is not a call to it.
		{Source: "kube-apiserver", Pos: pos("kube-apiserver.log", 7),
			Message: `v1beta1.metrics.k8s.io failed with: failing or missing response from https://10.244.1.5:4443/apis/metrics.k8s.io/v1beta1: Get "https://10.244.1.5:4443/apis/metrics.k8s.io/v1beta1": dial tcp 10.244.1.5:4443: i/o timeout`},
		// kube-proxy's own failure: kube-proxy-sync-errors'.
		{Source: "kube-proxy", Node: "node1", Pos: pos("kube-proxy.log", 3),
			Message: `k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.Service: failed to list *v1.Service: Get "https://10.96.0.1:443/api/v1/services": dial tcp 10.96.0.1:443: i/o timeout`},
		{Source: "kubelet", Node: "cp1", Level: "E", Time: time.Date(0, 10, 22, 16, 45, 57, 722243000, time.UTC), Pos: pos("kubelet.log", 40),
			Message: "Failed to ensure lease exists, will retry",
			Fields:  map[string]string{"err": `Get "https://192.168.1.120:6443/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cp1?timeout=10s": dial tcp 192.168.1.120:6443: connect: connection refused`}},
	}
	return s
}

func factStrings(f analyzer.Finding) map[string]string {
	out := map[string]string{}
	for k, v := range f.Facts {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func TestAPIServerUnreachable(t *testing.T) {
	t.Run("hit from the logs alone", func(t *testing.T) {
		f := run1(t, APIServerUnreachable, apiUnreachableSnap())
		if len(f) != 2 {
			t.Fatalf("%d findings: %+v", len(f), f)
		}
		// Sorted by first evidence: coredns.log before kubelet.log.
		cd, kl := f[0], f[1]
		if cd.Severity != analyzer.Warning || cd.Title != "coredns cannot reach the apiserver through the kubernetes Service 10.96.0.1:443 (i/o timeout)" {
			t.Errorf("coredns: %s %q", cd.Severity, cd.Title)
		}
		want := map[string]string{"component": "coredns", "address": "10.96.0.1:443", "target": "kubernetes Service ClusterIP",
			"failure": "i/o timeout", "errors": "2", "resources": "[Service EndpointSlice]",
			"first": "2024-10-08T18:09:45.024Z", "last": "2024-10-08T18:10:15.024Z"}
		if got := factStrings(cd); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("coredns facts\n got %v\nwant %v", got, want)
		}
		if ev := evStrings(cd.Evidence); fmt.Sprint(ev) != "[coredns.log:1 coredns.log:5 kube-proxy.log:3]" {
			t.Errorf("coredns evidence %v", ev) // kube-proxy's failures on an unknown node join as evidence
		}
		if want := "kube-proxy's log shows it failing to list Services or endpoints too"; !strings.Contains(cd.Summary, want) {
			t.Errorf("summary %q", cd.Summary)
		}
		if kl.Severity != analyzer.Warning || kl.Title != "kubelet: the apiserver at 192.168.1.120:6443 refuses connections" {
			t.Errorf("kubelet: %s %q", kl.Severity, kl.Title)
		}
		want = map[string]string{"component": "kubelet", "node": "cp1", "address": "192.168.1.120:6443", "target": "apiserver address",
			"failure": "connection refused", "errors": "1", "first": "Oct 22 16:45:57.722243", "last": "Oct 22 16:45:57.722243"}
		if got := factStrings(kl); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("kubelet facts\n got %v\nwant %v", got, want)
		}
	})

	t.Run("miss: kube-proxy's own lines and other failures", func(t *testing.T) {
		s := apiUnreachableSnap()
		s.Logs = append(s.Logs[3:8:8], model.LogEvent{Source: "coredns", Pos: model.Pos{File: "coredns.log", Line: 9},
			Message: `Get "https://10.96.0.1:443/api/v1/services": x509: certificate signed by unknown authority`})
		if f := run1(t, APIServerUnreachable, s); len(f) != 0 {
			t.Errorf("findings: %+v", f)
		}
		// kube-proxy-sync-errors takes kube-proxy's line, and only it.
		f := run1(t, KubeProxySyncErrors, apiUnreachableSnap())
		if len(f) != 1 || fmt.Sprint(evStrings(f[0].Evidence)) != "[kube-proxy.log:3]" {
			t.Errorf("kube-proxy-sync-errors: %+v", f)
		}
	})

	t.Run("older clients: unquoted URLs, the insecure port, api types, getsockopt", func(t *testing.T) {
		s := &model.Snapshot{Inputs: []model.Input{{Path: "kubelet.log", Kind: model.KindLogs}}}
		s.Logs = []model.LogEvent{{Source: "kubelet", Level: "E", Pos: model.Pos{File: "kubelet.log", Line: 3},
			Message: `k8s.io/kubernetes/pkg/kubelet/kubelet.go:382: Failed to list *api.Node: Get http://10.20.1.241:8080/api/v1/nodes?fieldSelector=metadata.name%3Dm1&resourceVersion=0: dial tcp 10.20.1.241:8080: getsockopt: connection refused`}}
		f := run1(t, APIServerUnreachable, s)
		if len(f) != 1 {
			t.Fatalf("%+v", f)
		}
		want := map[string]string{"component": "kubelet", "address": "10.20.1.241:8080", "target": "apiserver address",
			"failure": "connection refused", "errors": "1", "resources": "[Node]"}
		if got := factStrings(f[0]); fmt.Sprint(got) != fmt.Sprint(want) || f[0].Certainty != analyzer.Likely {
			t.Errorf("facts %v, certainty %s\nwant %v", got, f[0].Certainty, want)
		}
	})
}
