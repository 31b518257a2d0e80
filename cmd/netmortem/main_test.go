package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/testutil"
)

func fixture(rel string) string { return filepath.Join(testutil.Root(), "fixtures", rel) }

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var incident = fixture("incidents/ephemeral-nodeport")

func TestAnalyzeJSON(t *testing.T) {
	code, out, stderr := runCLI(t, "analyze", "-o", "json", incident)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	var rep struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Evidence []struct {
				Pos string `json:"position"`
			} `json:"evidence"`
		} `json:"findings"`
		Inputs []struct {
			Path   string `json:"path"`
			Format string `json:"format"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule+"/"+f.Severity)
	}
	slices.Sort(rules)
	if want := []string{"ephemeral-nodeport-overlap/error", "synack-reset/error"}; !slices.Equal(rules, want) {
		t.Errorf("findings %v, want %v", rules, want)
	}
	kinds := map[string]string{}
	for _, in := range rep.Inputs {
		kinds[filepath.Base(in.Path)] = in.Format
	}
	for file, kind := range map[string]string{"capture.pcap": "pcap", "ipvsadm.txt": "ipvsadm", "services.json": "kubectl",
		"kube-apiserver.yaml": "kubectl", "sysctl.txt": "sysctl", "EXPECTED.md": ""} {
		if got, ok := kinds[file]; !ok || got != kind {
			t.Errorf("input %s read as %q (present %v), want %q", file, got, ok, kind)
		}
	}
	if !strings.Contains(stderr, "read 5 inputs (0 skipped)") {
		t.Errorf("stderr lacks the input summary:\n%s", stderr)
	}
}

func TestAnalyzeFormats(t *testing.T) {
	for _, format := range []string{"table", "text", "json", "yaml", "markdown", "sarif", "html"} {
		t.Run(format, func(t *testing.T) {
			code, out, stderr := runCLI(t, "analyze", "-q", "-o", format, incident)
			if code != exitFindings {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("-q printed on stderr:\n%s", stderr)
			}
			for _, want := range []string{"synack-reset", "ephemeral-nodeport-overlap", "capture.pcap", "kube-apiserver.yaml"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s output lacks %q", format, want)
				}
			}
			switch format {
			case "json", "sarif":
				if !json.Valid([]byte(out)) {
					t.Errorf("%s output is not valid JSON", format)
				}
			case "yaml":
				var v any
				if err := yaml.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("yaml output: %v", err)
				}
			}
		})
	}
}

func TestAnalyzeTableGolden(t *testing.T) {
	code, out, _ := runCLI(t, "analyze", "-q", "-o", "text", incident)
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	out = strings.ReplaceAll(out, testutil.Root()+"/", "")
	testutil.Golden(t, "testdata/analyze-ephemeral-nodeport.txt", []byte(out))
}

func TestExitCodes(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("nothing netmortem reads\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"analyze", "-q", incident}, exitFindings},
		{[]string{"analyze", "-q", "--fail-on", "error", incident}, exitFindings},
		{[]string{"analyze", "-q", fixture("incidents/ephemeral-nodeport-control")}, exitOK},
		{[]string{"analyze", "-q", "--fail-on", "info", fixture("incidents/ephemeral-nodeport-control")}, exitOK},
		{[]string{"analyze", "-q", "--disable", "synack-reset,ephemeral-nodeport-overlap", incident}, exitOK},
		{[]string{"analyze"}, exitUsage},
		{[]string{"analyze", "--fail-on", "fatal", incident}, exitUsage},
		{[]string{"analyze", "-o", "pdf", incident}, exitUsage},
		{[]string{"analyze", "--enable", "no-such-rule", incident}, exitUsage},
		{[]string{"analyze", "-q", filepath.Join(empty, "missing")}, exitUsage},
		{[]string{"analyze", "-q", empty}, exitUnreadable},
		{[]string{"frobnicate"}, exitUsage},
		{[]string{}, exitUsage},
		{[]string{"rules"}, exitOK},
		{[]string{"explain", "synack-reset"}, exitOK},
		{[]string{"explain", "no-such-rule"}, exitUsage},
		{[]string{"version"}, exitOK},
		{[]string{"flows", "-q", fixture("captures/handshakes.pcap")}, exitOK},
		{[]string{"flows"}, exitUsage},
		{[]string{"flows", "--state", "nonsense", fixture("captures/handshakes.pcap")}, exitUsage},
		{[]string{"trace", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat")}, exitOK},
		{[]string{"trace", "--dst", "10.96.0.10", fixture("incidents/stale-dnat")}, exitUsage},
		{[]string{"trace", "--dst", "10.96.0.10:53", fixture("captures/handshakes.pcap")}, exitUnreadable},
	} {
		if code, _, stderr := runCLI(t, c.args...); code != c.code {
			t.Errorf("netmortem %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), code, c.code, stderr)
		}
	}
}

func TestFlows(t *testing.T) {
	code, out, stderr := runCLI(t, "flows", "-o", "json", incident)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var tab struct {
		Summary  map[string]int `json:"summary"`
		Attempts []struct {
			Client  string `json:"client"`
			Outcome string `json:"outcome"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	// The counts tshark gives for this capture (fixtures/tshark-truth).
	for k, v := range map[string]int{"tcp_streams": 8, "established": 6, "synack_client_rst": 2, "syn_retx": 4} {
		if tab.Summary[k] != v {
			t.Errorf("summary %s = %d, want %d", k, tab.Summary[k], v)
		}
	}
	code, out, _ = runCLI(t, "flows", "-o", "csv", "--state", "RSTO", incident)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "where" {
		t.Fatalf("csv rows %v, want a header and the 2 reset attempts", rows)
	}
	for _, r := range rows[1:] {
		if r[4] != "synack_client_rst" || !(strings.HasSuffix(r[2], ":36704") || strings.HasSuffix(r[2], ":32080")) {
			t.Errorf("row %v", r)
		}
	}
}

func TestInspect(t *testing.T) {
	code, out, stderr := runCLI(t, "inspect", "-o", "json", incident)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var in struct {
		Inputs []struct {
			Path    string         `json:"path"`
			Format  string         `json:"format"`
			Records int            `json:"records"`
			Skipped string         `json:"skipped"`
			Details map[string]int `json:"details"`
		} `json:"inputs"`
		Runnable []string `json:"runnable_rules"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, i := range in.Inputs {
		got[filepath.Base(i.Path)] = fmt.Sprintf("%s/%d/%s", i.Format, i.Records, i.Skipped)
	}
	for file, want := range map[string]string{
		"capture.pcap":        "pcap/92/",
		"ipvsadm.txt":         "ipvsadm/15/",
		"services.json":       "kubectl/3/",
		"kube-apiserver.yaml": "kubectl/1/",
		"sysctl.txt":          "sysctl/2/",
		"EXPECTED.md":         "/0/documentation (Markdown), not evidence",
	} {
		if got[file] != want {
			t.Errorf("%s: %q, want %q", file, got[file], want)
		}
	}
	if !slices.Contains(in.Runnable, "synack-reset") || !slices.Contains(in.Runnable, "ephemeral-nodeport-overlap") {
		t.Errorf("runnable rules %v", in.Runnable)
	}
	code, out, _ = runCLI(t, "inspect", fixture("captures/handshakes.pcap"))
	if code != exitOK || !strings.Contains(out, "Rules that lack evidence:") || !strings.Contains(out, "ephemeral-nodeport-overlap: needs sysctl") {
		t.Errorf("inspect table:\n%s", out)
	}
}

func TestBatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	bundles := []string{incident, fixture("incidents/ephemeral-nodeport-control"), filepath.Join(t.TempDir(), "missing")}
	code, _, stderr := runCLI(t, append([]string{"batch", "-j", "2", "--out", out}, bundles...)...)
	if code != exitUnreadable {
		t.Fatalf("exit %d, want %d (one bundle is missing); stderr:\n%s", code, exitUnreadable, stderr)
	}
	lines := readJSONL(t, out)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	status := map[string]string{}
	for _, l := range lines {
		status[filepath.Base(l.Bundle)] = fmt.Sprintf("%s/%d", l.Status, len(l.Findings))
	}
	want := map[string]string{"ephemeral-nodeport": "ok/2", "ephemeral-nodeport-control": "ok/0", "missing": "unreadable/0"}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("%s: %s, want %s", k, status[k], v)
		}
	}
	if !strings.Contains(stderr, "synack-reset") || !strings.Contains(stderr, "3 bundles: 3 analyzed now") {
		t.Errorf("summary:\n%s", stderr)
	}
	// --resume analyzes only what is not there yet.
	code, _, stderr = runCLI(t, "batch", "--resume", "--out", out, incident, fixture("captures/handshakes.pcap"))
	if code != exitFindings || !strings.Contains(stderr, "2 bundles: 1 analyzed now, 1 already done") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if n := len(readJSONL(t, out)); n != 4 {
		t.Errorf("%d lines after resume, want 4", n)
	}
}

func TestBatchBudgets(t *testing.T) {
	big := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 100000; i++ {
		fmt.Fprintf(&b, "net.ipv4.conf.veth%d.rp_filter = 1\n", i)
	}
	if err := os.WriteFile(filepath.Join(big, "sysctl.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, _ := runCLI(t, "batch", "-q", "--max-bundle-bytes", "50000", "--out", out, big, fixture("incidents/probe-restart-loop"))
	if code != exitUnreadable {
		t.Errorf("exit %d, want %d (a bundle over budget)", code, exitUnreadable)
	}
	status := map[string]string{}
	for _, r := range readJSONL(t, out) {
		status[r.Bundle] = r.Status
	}
	if status[big] != "over_budget" || status[fixture("incidents/probe-restart-loop")] != "ok" {
		t.Errorf("statuses %v", status)
	}
}

// An archive smaller than --max-bundle-bytes whose contents decompress to
// more is over budget too, as the flag's help and docs/scale.md say.
func TestBatchBudgetDecompressed(t *testing.T) {
	var text strings.Builder
	for i := 0; text.Len() < 100000; i++ {
		fmt.Fprintf(&text, "net.ipv4.conf.veth%d.rp_filter = 1\n", i)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "node1/sysctl.txt", Mode: 0o644, Size: int64(text.Len()), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(text.String()))
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		t.Fatal(err)
	}
	if buf.Len() >= 50000 {
		t.Fatalf("the archive is %d bytes, not under the budget", buf.Len())
	}
	big := filepath.Join(t.TempDir(), "big.tar.gz")
	if err := os.WriteFile(big, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, _ := runCLI(t, "batch", "-q", "--max-bundle-bytes", "50000", "--out", out, big, fixture("incidents/probe-restart-loop"))
	if code != exitUnreadable {
		t.Errorf("exit %d, want %d (a bundle over budget)", code, exitUnreadable)
	}
	lines := map[string]batchResult{}
	for _, r := range readJSONL(t, out) {
		lines[r.Bundle] = r
	}
	if l := lines[big]; l.Status != statusOverBudget || !strings.Contains(l.Error, "decompresses to more than 50000 bytes") {
		t.Errorf("%s: status %q, error %q", big, l.Status, l.Error)
	}
	if l := lines[fixture("incidents/probe-restart-loop")]; l.Status != statusOK {
		t.Errorf("probe-restart-loop: status %q, error %q", l.Status, l.Error)
	}
}

func TestBatchShards(t *testing.T) {
	bundles, _ := filepath.Glob(fixture("captures/*.pcap*"))
	seen := map[string]int{}
	for k := range 3 {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		runCLI(t, append([]string{"batch", "-q", "--shard", fmt.Sprintf("%d/3", k), "--out", out}, bundles...)...)
		for _, l := range readJSONL(t, out) {
			seen[l.Bundle]++
		}
	}
	for _, b := range bundles {
		if seen[b] != 1 {
			t.Errorf("%s analyzed %d times over 3 shards, want once", b, seen[b])
		}
	}
	if code, _, _ := runCLI(t, "batch", "--shard", "3/3", incident); code != exitUsage {
		t.Errorf("shard 3/3 accepted")
	}
}

func readJSONL(t *testing.T, path string) []batchResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []batchResult
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" { // an empty shard writes an empty file
			continue
		}
		var r batchResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func TestTraceIPVS(t *testing.T) {
	code, out, stderr := runCLI(t, "trace", "--dst", "10.10.85.235:36704", incident)
	if code != exitOK || !strings.Contains(out, "IPVS virtual service at ") || !strings.Contains(out, "ipvsadm.txt:10 (kube-system/kubernetes-dashboard)") ||
		!strings.Contains(out, "10.23.78.7:8443 ") {
		t.Errorf("exit %d:\n%s%s", code, out, stderr)
	}
}

func TestTraceOutput(t *testing.T) {
	code, out, stderr := runCLI(t, "trace", "--from-node", "--dst", "10.96.0.10:53", fixture("incidents/stale-dnat/iptables-save.txt"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"connection from the node to 10.96.0.10:53, nat OUTPUT", "KUBE-SVC-ERIFXISQEP7F7OF4: statistic 0.5: jump to KUBE-SEP-ZP3FB6NMPNCO4VBJ",
		"10.244.2.7:53 ", "25.0%  DNAT at", "iptables-save.txt:26 via OUTPUT > KUBE-SERVICES"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBatchManyBundles runs batch over bundles made by bench/make-bundles.sh,
// cuts the result file as a kill would, and resumes.
func TestBatchManyBundles(t *testing.T) {
	dir := t.TempDir()
	n := 60
	if testing.Short() || raceEnabled {
		// Two workers over 6 bundles give the race detector the same
		// code to watch (12 took 81 s of a loaded CI run); make test runs
		// the 60 without it.
		n = 6
	}
	cmd := exec.Command("bash", filepath.Join(testutil.Root(), "bench/make-bundles.sh"), dir, strconv.Itoa(n))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make-bundles: %v\n%s", err, b)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr := runCLI(t, "batch", "-j", "2", "--out", out, filepath.Join(dir, "bundle-*"))
	if code != exitFindings || !strings.Contains(stderr, fmt.Sprintf("%d bundles: %d analyzed now", n, n)) {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	// Every other bundle is a control: half hit, half clean.
	hits := 0
	for _, r := range readJSONL(t, out) {
		if r.Status != "ok" {
			t.Errorf("%s: %s", r.Bundle, r.Status)
		}
		if strings.HasSuffix(r.Bundle, "-control") != (len(r.Findings) == 0) {
			t.Errorf("%s: %d findings", r.Bundle, len(r.Findings))
		}
		if len(r.Findings) > 0 {
			hits++
		}
	}
	if hits != n/2 {
		t.Errorf("%d bundles with findings, want %d", hits, n/2)
	}
	// A kill leaves whole lines and maybe half of one: cut inside the
	// last third, resume, and get every bundle exactly once.
	b, _ := os.ReadFile(out)
	cut := len(b) * 2 / 3
	for _, c := range []int{cut, bytes.IndexByte(b[cut:], '\n') + cut} { // mid-line, and a whole line without its newline
		if err := os.WriteFile(out, b[:c], 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "batch", "-q", "--resume", "--out", out, filepath.Join(dir, "bundle-*")); code != exitFindings {
			t.Fatalf("resume: exit %d: %s", code, stderr)
		}
		seen := map[string]int{}
		for _, r := range readJSONL(t, out) {
			seen[r.Bundle]++
		}
		if len(seen) != n {
			t.Errorf("cut at %d: %d bundles after resume, want %d", c, len(seen), n)
		}
		for b, k := range seen {
			if k != 1 {
				t.Errorf("cut at %d: %s: %d lines", c, b, k)
			}
		}
	}
}

func BenchmarkBatch(b *testing.B) {
	dir := b.TempDir()
	const n = 60
	if out, err := exec.Command("bash", filepath.Join(testutil.Root(), "bench/make-bundles.sh"), dir, strconv.Itoa(n)).CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				run([]string{"batch", "-q", "-j", strconv.Itoa(jobs), filepath.Join(dir, "bundle-*")}, &stdout, &stderr)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "bundles/s")
		})
	}
}

// kube-proxy's nftables mode: a ClusterIP and a NodePort, from the node
// and from elsewhere, each rule named with its file:line; the Service
// without endpoints rejected.
func TestTraceNFT(t *testing.T) {
	file := filepath.Join(testutil.Root(), "dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt")
	at := file + ":"
	const web = "service-HVFWP5L3-default/web/tcp/http"
	const ext = "external-HVFWP5L3-default/web/tcp/http"
	for _, tc := range []struct {
		args []string
		want []string
	}{{
		[]string{"--dst", "10.96.100.10:80"},
		[]string{
			file + ": tcp connection from a client to 10.96.100.10:80, nftables hooks prerouting > forward\n",
			"  100.0%  " + at + "96  nat-prerouting: jump to services\n",
			"    100.0%  " + at + "30  services: goto " + web + "\n",
			"      100.0%  " + at + "135  " + web + ": jump to mark-for-masquerade\n",
			"      50.0%   " + at + "136  " + web + ": statistic 0.5: goto endpoint-4CWX3ECR-default/web/tcp/http__10.244.1.5/8080\n",
			"        50.0%   " + at + "126  endpoint-4CWX3ECR-default/web/tcp/http__10.244.1.5/8080: DNAT to 10.244.1.5:8080\n",
			"    10.244.2.6:8080          50.0%  DNAT at " + at + "131 via nat-prerouting > services > " + web + " > endpoint-DUVQ5S7B-default/web/tcp/http__10.244.2.6/8080\n",
		},
	}, {
		[]string{"--from-node", "--dst", "172.18.0.2:30080"},
		[]string{
			"tcp connection from the node to 172.18.0.2:30080, nftables hooks output\n",
			"  100.0%  " + at + "101  nat-output: jump to services\n",
			"    100.0%  " + at + "36  services: goto " + ext + "\n",
			"      100.0%  " + at + "141  " + ext + ": goto " + web + "\n",
			"    10.244.1.5:8080          50.0%  DNAT at " + at + "126 via nat-output > services > " + ext + " > " + web + " > endpoint-4CWX3ECR-default/web/tcp/http__10.244.1.5/8080\n",
			"  assumed: destination taken as an address of the node: it is in @nodeport-ips\n",
		},
	}, {
		[]string{"--dst", "172.18.0.2:30080", "--src", "192.0.2.7"},
		[]string{
			"tcp connection from 192.0.2.7 to 172.18.0.2:30080, nftables hooks prerouting > forward\n",
			"    100.0%  " + at + "36  services: goto " + ext + "\n",
			"    10.244.2.6:8080          50.0%  DNAT at " + at + "131 via nat-prerouting > services > " + ext + " > " + web + " > endpoint-DUVQ5S7B-default/web/tcp/http__10.244.2.6/8080\n",
		},
	}, {
		[]string{"--dst", "10.96.200.20:80"},
		[]string{
			"  100.0%  " + at + "57  filter-forward: jump to service-endpoints-check\n",
			"    100.0%  " + at + "18  service-endpoints-check: goto reject-chain\n",
			"      100.0%  " + at + "78  reject-chain: REJECT: the connection is refused\n",
			"    10.96.200.20:80         100.0%  rejected at " + at + "78 via filter-forward > service-endpoints-check > reject-chain\n",
		},
	}} {
		code, out, stderr := runCLI(t, append(append([]string{"trace"}, tc.args...), file)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}

// The public k3s listing: NodePort 30000 over nine endpoints, a ninth
// each; the Service without endpoints rejected.
func TestTraceNFTCorpus(t *testing.T) {
	file := filepath.Join(testutil.CorpusDir(t, "dumps", "nft"), "unknown-repo_k3s_kube-proxy-nftables-mode_nft-list-table.txt")
	code, out, stderr := runCLI(t, "trace", "--dst", "10.34.4.246:30000", file)
	if code != exitOK || strings.Count(out, "  11.1%  DNAT at ") != 9 ||
		!strings.Contains(out, "    10.42.5.164:8080         11.1%  DNAT at "+file+":258 via nat-prerouting > services > external-P6J77WGM-riset/hellopod-np-svc/tcp/ > ") {
		t.Errorf("NodePort: exit %d:\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "trace", "--from-node", "--dst", "10.43.21.102:4317", file)
	if code != exitOK || !strings.Contains(out, "    10.43.21.102:4317       100.0%  rejected at "+file+":143 via filter-output > service-endpoints-check > reject-chain\n") {
		t.Errorf("no endpoints: exit %d:\n%s%s", code, out, stderr)
	}
}

func TestAnalyzeOneInputSummary(t *testing.T) {
	_, _, stderr := runCLI(t, "analyze", "-o", "json", filepath.Join(incident, "capture.pcap"))
	if !strings.Contains(stderr, "read 1 input (0 skipped), 0 warnings; 1 finding\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// Every command names a flag it does not know, and where its usage is,
// instead of exiting 2 in silence.
func TestUnknownFlagSaid(t *testing.T) {
	for _, name := range commandNames() {
		if name == "help" { // help takes no flags: it gives the help of what follows
			continue
		}
		code, stdout, stderr := runCLI(t, name, "--no-such-flag", "x")
		want := "netmortem " + name + ": unknown flag: --no-such-flag\nRun 'netmortem " + name + " --help' for usage.\n"
		if code != exitUsage || stderr != want || stdout != "" {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit %d and %q", name, code, stdout, stderr, exitUsage, want)
		}
	}
}
