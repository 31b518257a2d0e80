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
	"github.com/netmortem/netmortem/report"
)

// A node's kube-proxy log reads the same from `kubectl logs` output and
// from the container runtime's files on the node: bundles built from the
// same kube-proxy lines of the stale-dnat incident, one holding kubectl
// logs (as sos's kubernetes plugin collects it) and others holding only
// /var/log/containers or /var/log/pods in CRI (with partial records) or
// Docker json-file format, give the same findings, with the same
// severity and facts.
func TestContainerRuntimeLogsLikeKubectlLogs(t *testing.T) {
	incident := filepath.Join("..", "fixtures", "incidents", "stale-dnat")
	logText, err := os.ReadFile(filepath.Join(incident, "kube-proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(logText), "\n"), "\n")
	shared := map[string]string{ // the incident's other evidence: path in the bundle
		"iptables-save.txt":       "sos_commands/networking/iptables-save",
		"iptables-nat-nvL.txt":    "sos_commands/networking/iptables_-t_nat_-nvL",
		"capture.pcap":            "evidence/capture.pcap",
		"service-kube-dns.json":   "evidence/service-kube-dns.json",
		"endpoints-kube-dns.json": "evidence/endpoints-kube-dns.json",
	}
	const (
		containerID = "973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4"
		podUID      = "0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
	)
	bundles := map[string]map[string]string{ // name: path in the sosreport: content
		"kubectl-logs": {"sos_commands/kubernetes/kubectl_logs_-n_kube-system_kube-proxy-h2n9c": string(logText)},
		"var-log-containers-cri": {
			"var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-" + containerID + ".log": criLog(t, lines, false),
		},
		"var-log-pods-cri-partial": {
			"var/log/pods/kube-system_kube-proxy-h2n9c_" + podUID + "/kube-proxy/0.log": criLog(t, lines, true),
		},
		"var-log-containers-docker": {
			"var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-" + containerID + ".log": dockerLog(t, lines),
		},
	}
	results := map[string][]string{}
	for name, files := range bundles {
		root := filepath.Join(t.TempDir(), "sosreport-node1-2026-11-23-abcdefg")
		write := func(rel string, b []byte) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("hostname", []byte("node1\n"))
		for src, dst := range shared {
			b, err := os.ReadFile(filepath.Join(incident, src))
			if err != nil {
				t.Fatal(err)
			}
			write(dst, b)
		}
		for rel, content := range files {
			write(rel, []byte(content))
		}
		snap, warns, res := analyze(t, root)
		if len(warns) != 0 || len(res.Errors) != 0 {
			t.Errorf("%s: warnings %v, rule errors %v", name, warns, res.Errors)
		}
		kp := 0
		for _, ev := range snap.Logs {
			if ev.Source != "kube-proxy" || ev.Node != "node1" || ev.Namespace != "kube-system" || ev.Pod != "kube-proxy-h2n9c" {
				t.Errorf("%s: event %+v", name, ev)
			}
			kp++
		}
		if kp != len(lines) {
			t.Errorf("%s: %d kube-proxy events, want %d", name, kp, len(lines))
		}
		results[name] = findingLines(res.Findings)
	}
	want := results["kubectl-logs"]
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
