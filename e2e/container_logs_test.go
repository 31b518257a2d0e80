package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// A node's kube-proxy log reads the same from `kubectl logs` output and
// from the container runtime's files on the node: sosreports and
// troubleshoot bundles built from the same kube-proxy lines of the
// stale-dnat incident and the same other evidence, some holding kubectl
// logs (as sos's kubernetes plugin and troubleshoot's logs collector keep
// it), the others only the node's /var/log/containers or /var/log/pods in
// CRI (with partial records) or Docker json-file format, give the same
// findings, with the same severity and facts.
func TestContainerRuntimeLogsLikeKubectlLogs(t *testing.T) {
	incident := filepath.Join("..", "fixtures", "incidents", "stale-dnat")
	logText, err := os.ReadFile(filepath.Join(incident, "kube-proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(logText), "\n"), "\n")
	const (
		containerID = "973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4"
		podUID      = "0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
		pods        = `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"kube-proxy-h2n9c","namespace":"kube-system"},` +
			`"spec":{"nodeName":"node1","containers":[{"name":"kube-proxy","image":"registry.k8s.io/kube-proxy:v1.29.0"}]},"status":{"phase":"Running"}}]}`
		nodes = `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"node1"},"status":{"nodeInfo":{"kubeProxyVersion":"v1.29.0","kubeletVersion":"v1.29.0"}}}]}`
	)
	containers := "var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-" + containerID + ".log"
	podsLog := "var/log/pods/kube-system_kube-proxy-h2n9c_" + podUID + "/kube-proxy/0.log"
	// The layouts, each with the incident's other evidence on node1 and
	// the cluster's pod and node lists, at the places the layout keeps
	// them (path in the bundle: file of the incident, or content).
	layouts := map[string]map[string]string{
		"sosreport": {
			"hostname":                                     "=node1\n",
			"sos_commands/networking/iptables-save":        "iptables-save.txt",
			"sos_commands/networking/iptables_-t_nat_-nvL": "iptables-nat-nvL.txt",
			"evidence/capture.pcap":                        "capture.pcap",
			"evidence/service-kube-dns.json":               "service-kube-dns.json",
			"evidence/endpoints-kube-dns.json":             "endpoints-kube-dns.json",
			"evidence/pods.json":                           "=" + pods,
			"evidence/nodes.json":                          "=" + nodes,
		},
		"troubleshoot": {
			"version.yaml":                                  "=apiVersion: troubleshoot.sh/v1beta2\nkind: SupportBundle\n",
			"cluster-resources/nodes.json":                  "=" + nodes,
			"cluster-resources/pods/kube-system.json":       "=" + pods,
			"host-collectors/node1/iptables-save.txt":       "iptables-save.txt",
			"host-collectors/node1/iptables-nat-nvL.txt":    "iptables-nat-nvL.txt",
			"host-collectors/node1/capture.pcap":            "capture.pcap",
			"host-collectors/node1/service-kube-dns.json":   "service-kube-dns.json",
			"host-collectors/node1/endpoints-kube-dns.json": "endpoints-kube-dns.json",
		},
	}
	bundles := []struct {
		name, layout string
		files        map[string]string // path in the bundle: content
	}{
		{"sosreport with kubectl logs", "sosreport", map[string]string{"sos_commands/kubernetes/kubectl_logs_-n_kube-system_kube-proxy-h2n9c": string(logText)}},
		{"sosreport with /var/log/containers (CRI)", "sosreport", map[string]string{containers: criLog(t, lines, false)}},
		{"sosreport with /var/log/pods (CRI, partial records)", "sosreport", map[string]string{podsLog: criLog(t, lines, true)}},
		{"sosreport with /var/log/containers (Docker json-file)", "sosreport", map[string]string{containers: dockerLog(t, lines)}},
		{"troubleshoot with kubectl logs", "troubleshoot", map[string]string{"cluster-resources/pods/logs/kube-system/kube-proxy-h2n9c/kube-proxy.log": string(logText)}},
		{"troubleshoot with the node's /var/log/containers (CRI)", "troubleshoot", map[string]string{"host-collectors/node-logs/node1/" + containers: criLog(t, lines, false)}},
	}
	results := map[string][]string{}
	for _, b := range bundles {
		root := filepath.Join(t.TempDir(), "sosreport-node1-2026-11-23-abcdefg")
		write := func(rel string, content []byte) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for dst, src := range layouts[b.layout] {
			if c, ok := strings.CutPrefix(src, "="); ok {
				write(dst, []byte(c))
				continue
			}
			content, err := os.ReadFile(filepath.Join(incident, src))
			if err != nil {
				t.Fatal(err)
			}
			write(dst, content)
		}
		for rel, content := range b.files {
			write(rel, []byte(content))
		}
		snap, warns, res := analyze(t, root)
		if len(warns) != 0 || len(res.Errors) != 0 {
			t.Errorf("%s: warnings %v, rule errors %v", b.name, warns, res.Errors)
		}
		logInputs := 0
		for _, in := range snap.Inputs {
			if in.Layout != b.layout {
				t.Errorf("%s: %s read in layout %q", b.name, in.Path, in.Layout)
			}
			if in.Kind == model.KindLogs {
				logInputs++
			}
		}
		if logInputs != 1 {
			t.Errorf("%s: %d log inputs", b.name, logInputs)
		}
		kp := 0
		for _, ev := range snap.Logs {
			if ev.Source != "kube-proxy" || ev.Node != "node1" || ev.Namespace != "kube-system" || ev.Pod != "kube-proxy-h2n9c" {
				t.Errorf("%s: event %+v", b.name, ev)
			}
			kp++
		}
		if kp != len(lines) {
			t.Errorf("%s: %d kube-proxy events, want %d", b.name, kp, len(lines))
		}
		results[b.name] = findingLines(res.Findings)
	}
	want := results["sosreport with kubectl logs"]
	// The findings themselves: those of the incident (see its
	// EXPECTED.md), kube-proxy's on node1.
	for _, rule := range []string{"stale-dnat", "syn-unanswered"} {
		if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, rule+" ") }) {
			t.Errorf("no %s finding: %q", rule, want)
		}
	}
	kubeProxy := "kube-proxy-sync-errors error errors=8 first=Jan 26 20:40:24.739255 last=Jan 26 20:41:14.751472 node=node1 resources=EndpointSlice, Service"
	if !slices.Contains(want, kubeProxy) {
		t.Errorf("no finding %q in\n%s", kubeProxy, strings.Join(want, "\n"))
	}
	for name, got := range results {
		if !slices.Equal(got, want) {
			t.Errorf("%s gives\n%s\nkubectl logs gives\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// findingLines renders findings as "rule severity fact=value ...", facts
// sorted, the findings sorted.
func findingLines(fs []analyzer.Finding) []string {
	var out []string
	for _, f := range fs {
		var kv []string
		for k, v := range f.Facts {
			kv = append(kv, k+"="+report.FactValue(v))
		}
		slices.Sort(kv)
		out = append(out, fmt.Sprintf("%s %s %s", f.Rule, f.Severity, strings.Join(kv, " ")))
	}
	slices.Sort(out)
	return out
}

// klogTimeRe takes the month, day and clock of a klog line.
var klogTimeRe = regexp.MustCompile(`^[IWEF](\d\d)(\d\d) (\d\d:\d\d:\d\d)\.(\d{6})`)

// runtimeTime is the time a container runtime writes for a klog line: the
// same instant, a little later, with the year.
func runtimeTime(t *testing.T, line string) string {
	m := klogTimeRe.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no klog time in %q", line)
	}
	return fmt.Sprintf("2026-%s-%sT%s.%s417Z", m[1], m[2], m[3], m[4])
}

// criLog writes lines as containerd does, on stderr; split cuts every
// second line into a partial record and the full record that ends it.
func criLog(t *testing.T, lines []string, split bool) string {
	var b strings.Builder
	for i, l := range lines {
		ts := runtimeTime(t, l)
		if split && i%2 == 1 {
			fmt.Fprintf(&b, "%s stderr P %s\n", ts, l[:len(l)/2])
			fmt.Fprintf(&b, "%s stderr F %s\n", ts, l[len(l)/2:])
			continue
		}
		fmt.Fprintf(&b, "%s stderr F %s\n", ts, l)
	}
	return b.String()
}

// dockerLog writes lines as Docker's json-file driver does.
func dockerLog(t *testing.T, lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		q := strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), `"`, `\"`)
		fmt.Fprintf(&b, `{"log":"%s\n","stream":"stderr","time":"%s"}`+"\n", q, runtimeTime(t, l))
	}
	return b.String()
}
