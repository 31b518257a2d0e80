package collect_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
	"github.com/netmortem/netmortem/report"
)

// needRoot skips a test that needs root and ip netns, except in CI, where
// it must run.
func needRoot(t *testing.T, tools ...string) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root"
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil && why == "" {
			why = "needs " + tool
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s, which CI provides", why)
	}
	t.Skip(why)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stub writes an executable shell script called name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// kubeList joins the items of the kubectl JSON files into one List, as
// kubectl get KIND,KIND -o json prints it. It adds an environment value
// that looks like a credential to the first Pod, which the collector must
// redact.
func kubeList(t *testing.T, secret string, files ...string) []byte {
	t.Helper()
	var items []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		items = append(items, doc.Items...)
	}
	for _, it := range items {
		if it["kind"] != "Pod" {
			continue
		}
		spec := it["spec"].(map[string]any)
		c := spec["containers"].([]any)[0].(map[string]any)
		c["env"] = []any{map[string]any{"name": "DB_PASSWORD", "value": secret}, map[string]any{"name": "LOG_LEVEL", "value": "debug"}}
		break
	}
	b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestScriptOnNode runs the collector script for real, as root, in a
// network namespace made for the test (a veth pair to a second namespace,
// with traffic during the capture), with the tools this machine lacks
// stubbed by scripts printing real outputs; then reads the archive it
// wrote: every file is recognized, nothing warns, the manifest is listed as
// the collector's, Secrets-like values are gone, and no rule is skipped for
// want of evidence.
func TestScriptOnNode(t *testing.T) {
	needRoot(t, "ip", "tcpdump", "iptables", "conntrack", "timeout", "tar", "gzip", "awk")
	shell := "dash"
	if _, err := exec.LookPath(shell); err != nil {
		shell = "sh"
	}
	nsA := fmt.Sprintf("nmcollect-%d-a", os.Getpid())
	nsB := fmt.Sprintf("nmcollect-%d-b", os.Getpid())
	for _, ns := range []string{nsA, nsB} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v\n%s", ns, err, out)
			}
		})
	}
	veth := fmt.Sprintf("nmc%d", os.Getpid()%100000)
	run(t, "ip", "-n", nsA, "link", "add", veth+"a", "type", "veth", "peer", "name", veth+"b", "netns", nsB)
	run(t, "ip", "-n", nsA, "addr", "add", "10.213.7.1/24", "dev", veth+"a")
	run(t, "ip", "-n", nsB, "addr", "add", "10.213.7.2/24", "dev", veth+"b")
	for _, ns := range []string{nsA, nsB} {
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	run(t, "ip", "-n", nsA, "link", "set", veth+"a", "up")
	run(t, "ip", "-n", nsB, "link", "set", veth+"b", "up")

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	data := filepath.Join(tmp, "data")
	out := filepath.Join(tmp, "out")
	for _, d := range []string{bin, data, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "hunter2-s3cr3t"
	writes := map[string][]byte{
		"objects.json": kubeList(t, secret, "fixtures/incidents/probe-restart-loop/pods-kube-system.json",
			"fixtures/incidents/probe-restart-loop/nodes.json", "fixtures/incidents/ephemeral-nodeport-control/services.json"),
		"kube-system.json": kubeList(t, secret, "fixtures/incidents/apiserver-affinity/leases-kube-system.json"),
		"events.json":      kubeList(t, secret, "fixtures/incidents/probe-restart-loop/events-kube-system.json"),
		"version.json": []byte(`{
  "clientVersion": {"major": "1", "minor": "29", "gitVersion": "v1.29.2", "gitCommit": "4b8e819355d791d96b7e9d9efe4cbafae2311c88", "gitTreeState": "clean", "buildDate": "2024-02-14T10:40:49Z", "goVersion": "go1.21.7", "compiler": "gc", "platform": "linux/amd64"},
  "kustomizeVersion": "v5.0.4-0.20230601165947-6ce0bf390ce3",
  "serverVersion": {"major": "1", "minor": "29", "gitVersion": "v1.29.2", "gitCommit": "4b8e819355d791d96b7e9d9efe4cbafae2311c88", "gitTreeState": "clean", "buildDate": "2024-02-14T10:32:40Z", "goVersion": "go1.21.7", "compiler": "gc", "platform": "linux/amd64"}
}
`),
	}
	for name, b := range writes {
		if err := os.WriteFile(filepath.Join(data, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := testutil.Root()
	// ipvsadm loads the ip_vs module when it is not loaded, so the
	// collector may run it only where /proc/net/ip_vs exists; the stub
	// records each call.
	ipvsCalls := filepath.Join(tmp, "ipvsadm-calls")
	stub(t, bin, "ipvsadm", fmt.Sprintf(`echo "$*" >> %q
case "$*" in
*--stats*) exit 0 ;;
*--timeout*) echo "Timeout (tcp tcpfin udp): 900 120 300" ;;
-v) echo "ipvsadm v1.31 2019/12/24 (compiled with popt and IPVS v1.2.1)" ;;
*) cat %q ;;
esac
`, ipvsCalls, filepath.Join(root, "fixtures/incidents/ephemeral-nodeport/ipvsadm.txt")))
	stub(t, bin, "journalctl", fmt.Sprintf(`case "$*" in
*--version*) echo "systemd 252 (252.39-1~deb12u2)" ;;
*"-u kubelet"*) cat %q ;;
*"-u kube-proxy"*) cat %q ;;
esac
`, filepath.Join(root, "fixtures/real/journald/azure-docs-zh-tw_aks-kubelet-logs_journalctl-o-cat.txt"),
		filepath.Join(root, "fixtures/real/kubectl-logs/kubernetes-pr90031_kube-proxy-steady-state-log_7-digit-tid.log")))
	stub(t, bin, "kubectl", fmt.Sprintf(`case "$*" in
*secret*) echo "kubectl get secrets must never run" >&2; exit 1 ;;
"version --client") echo "Client Version: v1.29.2" ;;
"version -o json"*) cat %[1]q/version.json ;;
"get configmaps,leases"*) cat %[1]q/kube-system.json ;;
"get events"*) cat %[1]q/events.json ;;
"get nodes,pods,"*) cat %[1]q/objects.json ;;
*) echo "unexpected kubectl $*" >&2; exit 1 ;;
esac
`, data))
	// docker would be tried where crictl is missing; the test node has
	// neither.
	stub(t, bin, "docker", "echo 'Cannot connect to the Docker daemon' >&2; exit 1\n")

	var script bytes.Buffer
	o := collect.DefaultOptions()
	o.CaptureSeconds = 3
	o.Kubectl = true
	if err := collect.WriteScript(&script, o); err != nil {
		t.Fatal(err)
	}
	scriptFile := filepath.Join(tmp, "collect.sh")
	if err := os.WriteFile(scriptFile, script.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	// What the collector must leave as it was: the namespace's rules
	// (without their counters, which the traffic moves), links and IPv4
	// routes.
	state := func() string {
		return run(t, "ip", "netns", "exec", nsA, "sh", "-c", "iptables-save 2>&1 | grep -v '^#' | sed 's/\\[[0-9]*:[0-9]*\\]//'; nft -s list ruleset 2>&1; ip link; ip -4 route show table all")
	}
	run(t, "ip", "netns", "exec", nsA, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", veth+"a", "-j", "MASQUERADE")
	before := state()
	cmd := exec.Command("ip", "netns", "exec", nsA, shell, scriptFile, out)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "NODE_NAME=test-node", "TMPDIR="+tmp, "KUBECONFIG=/nonexistent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Traffic for the whole collection, so the capture has packets
	// whenever tcpdump starts.
	ping := exec.Command("ip", "netns", "exec", nsA, "ping", "-q", "-i", "0.2", "-w", "60", "10.213.7.2")
	if err := ping.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ping.Process.Kill()
		_ = ping.Wait()
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("collector: %v\n%s", err, stderr.String())
	}
	if after := state(); after != before {
		t.Errorf("the collector changed the node's rules, links or routes:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A command that wrote nothing but errors is said so while the
	// collector runs, not only in the manifest.
	if want := "netmortem-collect: docker-ps gave no output: Cannot connect to the Docker daemon\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("collector's messages lack %q:\n%s", want, stderr.String())
	}
	archive := strings.TrimSpace(stdout.String())
	if filepath.Dir(archive) != out || !strings.HasPrefix(filepath.Base(archive), "netmortem-test-node-") || !strings.HasSuffix(archive, ".tar.gz") {
		t.Fatalf("collector printed %q, want %s/netmortem-test-node-TIME.tar.gz; stderr:\n%s", archive, out, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "netmortem-collect.*")); len(left) > 0 {
		t.Errorf("the collector left its temporary directory: %v", left)
	}

	members := tarMembers(t, archive)
	var manifest string
	for name, b := range members {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the credential-like value %q: not redacted", name, secret)
		}
		if filepath.Base(name) == collect.ManifestFile {
			manifest = string(b)
		}
	}
	var objects []byte
	for name, b := range members {
		if strings.HasSuffix(name, "/"+collect.ClusterDir+"/objects.json") {
			objects = b
		}
	}
	if !bytes.Contains(objects, []byte(`"value": "***HIDDEN***"`)) || !bytes.Contains(objects, []byte(`"value": "debug"`)) {
		t.Errorf("objects.json: want DB_PASSWORD's value hidden and LOG_LEVEL's kept")
	}
	m, err := collect.ReadManifest(collect.ManifestFile, strings.NewReader(manifest))
	if err != nil {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	if m.Node != "test-node" || m.ScriptVersion != collect.ScriptVersion || m.Started == "" || m.Ended == "" || len(m.Tools) == 0 {
		t.Errorf("manifest: node %q, version %q, times %q..%q, %d tools; want test-node, %s, both times, tools",
			m.Node, m.ScriptVersion, m.Started, m.Ended, len(m.Tools), collect.ScriptVersion)
	}
	ran := map[string]collect.Ran{}
	for _, r := range m.Ran {
		ran[r.Name] = r
	}
	skippedNames := map[string]bool{}
	for _, s := range m.Skipped {
		skippedNames[s.Name] = true
	}
	ipvsLoaded := exec.Command("ip", "netns", "exec", nsA, "test", "-e", "/proc/net/ip_vs").Run() == nil
	calls, _ := os.ReadFile(ipvsCalls)
	if !ipvsLoaded {
		if len(calls) > 0 {
			t.Errorf("ipvsadm ran (%q) where the ip_vs module is not loaded: it would load it", calls)
		}
		if !strings.Contains(manifest, "skipped\tipvsadm\tabsent: /proc/net/ip_vs\n") {
			t.Errorf("manifest: want ipvsadm skipped for want of /proc/net/ip_vs\n%s", manifest)
		}
		// What the stub would have given, so the rest reads as on an
		// IPVS node.
		ipvs, err := os.ReadFile(filepath.Join(root, "fixtures/incidents/ephemeral-nodeport/ipvsadm.txt"))
		if err != nil {
			t.Fatal(err)
		}
		archive = addToArchive(t, archive, "test-node/ipvsadm.txt", ipvs)
	} else if r, ok := ran["ipvsadm"]; !ok || r.File == "" {
		t.Errorf("manifest: ipvsadm did not run or wrote nothing where ip_vs is loaded (%+v)\n%s", r, manifest)
	}
	for _, name := range []string{"capture", "ss-tanpi", "ss-lntup", "sysctl-net", "ip-addr", "ip-route", "ip-rule", "nstat",
		"conntrack-stats", "resolv-conf", "kubelet-log", "kubectl-objects", "kubectl-version"} {
		if r, ok := ran[name]; !ok || r.File == "" {
			t.Errorf("manifest: %s did not run or wrote nothing (%+v)\n%s", name, r, manifest)
		}
	}
	if r := ran["capture"]; r.File != "test-node/capture.pcap" {
		t.Errorf("capture went to %q, want test-node/capture.pcap", r.File)
	}

	snap, warns, err := parse.Open(context.Background(), archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	sawManifest := false
	for _, in := range snap.Inputs {
		switch {
		case filepath.Base(in.Path) == collect.ManifestFile:
			sawManifest = in.Skipped == bundle.ManifestSkipped
		case in.Skipped != "":
			t.Errorf("%s: skipped: %s", in.Path, in.Skipped)
		case in.Layout != bundle.LayoutNetmortem:
			t.Errorf("%s: layout %q, want %q", in.Path, in.Layout, bundle.LayoutNetmortem)
		case strings.Contains(in.Path, "/"+collect.ClusterDir+"/") && in.Node != "":
			t.Errorf("%s: cluster-wide, but placed on node %q", in.Path, in.Node)
		case !strings.Contains(in.Path, "/"+collect.ClusterDir+"/") && in.Node != "test-node":
			t.Errorf("%s: node %q, want test-node", in.Path, in.Node)
		}
	}
	if !sawManifest {
		t.Errorf("the manifest is not listed as the collector's manifest: %+v", snap.Inputs)
	}
	if len(snap.IPVS) == 0 || len(snap.Logs) == 0 || len(snap.Kube.Pods) == 0 || len(snap.Kube.Services) == 0 ||
		len(snap.ServerVersions) == 0 || len(snap.Sysctls) == 0 || len(snap.Addrs) == 0 || len(snap.Routes) == 0 ||
		len(snap.RouteRules) == 0 || len(snap.ResolvConfs) == 0 {
		t.Errorf("collected bundle read thin: %d IPVS services, %d log events, %d pods, %d services, %d server versions, "+
			"%d sysctls, %d addresses, %d routes, %d policy routing rules, %d resolver configurations",
			len(snap.IPVS), len(snap.Logs), len(snap.Kube.Pods), len(snap.Kube.Services), len(snap.ServerVersions),
			len(snap.Sysctls), len(snap.Addrs), len(snap.Routes), len(snap.RouteRules), len(snap.ResolvConfs))
	}
	packets := 0
	for _, c := range snap.Captures {
		packets += c.Packets
	}
	t.Logf("capture: %d packets", packets)
	if len(snap.Captures) != 1 || packets < 5 {
		t.Errorf("%d captures of %d packets, want one with the pings", len(snap.Captures), packets)
	}
	if len(snap.Collections) != 1 || snap.Collections[0].Node != "test-node" ||
		len(snap.Collections[0].Ran) != len(m.Ran) || len(snap.Collections[0].Skipped) != len(m.Skipped) {
		t.Errorf("collections %+v, want test-node's, %d commands run and %d skipped", snap.Collections, len(m.Ran), len(m.Skipped))
	}
	res := analyzer.Run(context.Background(), snap, rules.All(), nil)
	// A rule may be skipped only for kinds whose command ran and printed
	// nothing: a table the node has empty (no neighbour yet in a fresh
	// namespace) is collected, not missing.
	empty := func(k model.Kind) bool {
		for _, c := range collect.Commands {
			if r, ok := ran[c.Name]; ok && slices.Contains(c.Kinds, k) && r.Status == 0 && r.File == "" {
				return true
			}
		}
		return false
	}
	for _, s := range res.Skipped {
		if len(s.AnyOf) == 0 && len(s.Missing) > 0 && !slices.ContainsFunc(s.Missing, func(k model.Kind) bool { return !empty(k) }) {
			t.Logf("rule %s skipped: the node's %v came back empty", s.Rule, s.Missing)
			continue
		}
		t.Errorf("rule %s skipped on a collected bundle: missing %v, any of %v", s.Rule, s.Missing, s.AnyOf)
	}
	for _, e := range res.Errors {
		t.Errorf("rule %s failed: %v", e.Rule, e.Err)
	}
	// What to collect next never asks the node for a command the
	// collector ran there with status 0, or skipped there.
	for _, e := range report.NextEvidenceFor(snap, rules.All(), res) {
		r, ran := ran[e.Command]
		_, skipped := skippedNames[e.Command]
		if slices.Contains(e.Nodes, "test-node") && (ran && r.Status == 0 || skipped) {
			t.Errorf("next evidence asks test-node for %s, which the collector ran or skipped there: %+v", e.Command, e)
		}
	}
}

// tarMembers reads every regular file of a .tar.gz.
func tarMembers(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

// addToArchive writes a copy of the .tar.gz at path, in a new directory
// and under the same name, with one more file, name, inside its top
// directory; it returns the copy's path.
func addToArchive(t *testing.T, path, name string, b []byte) string {
	t.Helper()
	members := tarMembers(t, path)
	top := ""
	for m := range members {
		top, _, _ = strings.Cut(m, "/")
		break
	}
	members[top+"/"+name] = b
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for m, data := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m, Mode: 0o600, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []io.Closer{tw, zw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestScriptTmpReadOnlyOrFull runs the collector, as root, in a mount and
// network namespace of its own, with $TMPDIR a read-only file system, then
// a full one: read-only, it gathers its files in the output directory and
// writes the archive; full, it writes no archive and exits with an error
// that says so, instead of an archive that lost its files.
func TestScriptTmpReadOnlyOrFull(t *testing.T) {
	needRoot(t, "unshare", "mount", "tar", "gzip")
	var script bytes.Buffer
	o := collect.DefaultOptions()
	o.CaptureSeconds = 0
	if err := collect.WriteScript(&script, o); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "collect.sh")
	if err := os.WriteFile(scriptFile, script.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	for _, tc := range []struct {
		name, mount string
		ok          bool
	}{
		{"read-only", "mount -t tmpfs -o ro none " + tmp, true},
		{"full", "mount -t tmpfs -o size=64k none " + tmp + " && dd if=/dev/zero of=" + tmp + "/fill bs=4k 2>/dev/null; true", false},
	} {
		out := filepath.Join(dir, tc.name)
		for _, d := range []string{tmp, out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("unshare", "-m", "-n", "sh", "-c", tc.mount+" && sh "+scriptFile+" "+out)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "NODE_NAME=n1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		left, _ := filepath.Glob(filepath.Join(out, "*"))
		archive := strings.TrimSpace(stdout.String())
		if tc.ok {
			if err != nil || len(left) != 1 || left[0] != archive {
				t.Errorf("%s $TMPDIR: %v, printed %q, left %v; want the archive alone\n%s", tc.name, err, archive, left, stderr.String())
				continue
			}
			if _, ok := tarMembers(t, archive)[strings.TrimSuffix(filepath.Base(archive), ".tar.gz")+"/"+collect.ManifestFile]; !ok {
				t.Errorf("%s $TMPDIR: the archive has no manifest", tc.name)
			}
			continue
		}
		if err == nil || archive != "" || len(left) != 0 || !strings.Contains(stderr.String(), "no archive written") {
			t.Errorf("%s $TMPDIR: %v, printed %q, left %v; want an error and no archive\n%s", tc.name, err, archive, left, stderr.String())
		}
	}
}
