package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/anon"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// anonFixtures are the bundles the --anonymize tests run on: every
// incident and every folder of real evidence.
func anonFixtures(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{"incidents/*", "real/*"} {
		m, err := filepath.Glob(fixture(pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) < 20 {
		t.Fatalf("only %d fixtures found", len(dirs))
	}
	return dirs
}

// writeAll runs analyze on dir with every format written to a file of out,
// with extra flags, and returns each format's output.
func writeAll(t *testing.T, dir, out string, extra ...string) map[string]string {
	t.Helper()
	args := []string{"analyze", "-q", "--fail-on", "never"}
	for _, f := range report.Formats() {
		args = append(args, "-o", f+"="+filepath.Join(out, f))
	}
	args = append(append(args, extra...), dir)
	if code, _, stderr := runCLI(t, args...); code != exitOK && code != exitUnreadable {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr)
	}
	got := map[string]string{}
	for _, f := range report.Formats() {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got[f] = string(b)
	}
	got["sarif"] = withoutRuleDocs(t, got["sarif"])
	return got
}

// withoutRuleDocs is a SARIF log without its rules' descriptions: they
// are netmortem's own documentation, whose examples hold addresses.
func withoutRuleDocs(t *testing.T, sarif string) string {
	t.Helper()
	var log map[string]any
	if err := json.Unmarshal([]byte(sarif), &log); err != nil {
		t.Fatalf("SARIF: %v", err)
	}
	for _, run := range log["runs"].([]any) {
		driver := run.(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)
		if _, ok := driver["rules"]; !ok {
			t.Fatal("SARIF without tool.driver.rules")
		}
		delete(driver, "rules")
	}
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// otherCommands adds to outs what inspect and flows write of dir, in each
// of their formats, with extra flags.
func otherCommands(t *testing.T, dir string, outs map[string]string, extra ...string) {
	t.Helper()
	for _, c := range [][]string{{"inspect", "table"}, {"inspect", "json"}, {"flows", "table"}, {"flows", "json"}, {"flows", "csv"}} {
		args := append(append([]string{c[0], "-q", "-o", c[1]}, extra...), dir)
		if c[0] == "inspect" {
			args = append(append([]string{c[0], "-o", c[1]}, extra...), dir)
		}
		code, out, stderr := runCLI(t, args...)
		if code != exitOK && code != exitUnreadable {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		outs[c[0]+"-"+c[1]] = out
	}
	for _, c := range traceAndDiff(t, dir) {
		args := append(append([]string{c[0]}, extra...), c[1:]...)
		code, out, stderr := runCLI(t, args...)
		if code != exitOK && code != exitFindings && code != exitUnreadable {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if strings.TrimSpace(out) == "" {
			t.Fatalf("%v: no output\n%s", args, stderr)
		}
		outs[c[0]+" "+c[1]] = out
	}
}

// traceAndDiff are the trace and diff commands the --anonymize tests run
// on dir: trace to the first Service address of its dataplane, if it has
// one, and diff of dir's control fixture (or dir itself) and dir, as text
// and as JSON.
func traceAndDiff(t *testing.T, dir string) [][]string {
	t.Helper()
	old := dir + "-control"
	if _, err := os.Stat(old); err != nil {
		old = dir
	}
	cmds := [][]string{{"diff", "-otext", "--fail-on=never", old, dir}, {"diff", "-ojson", "--fail-on=never", old, dir}}
	in := operand.OpenPaths(t.Context(), []string{dir}, &parse.Options{})
	for _, sp := range dataplane.Build(in.Snap) {
		if len(sp.Frontends) == 0 || len(sp.Backends) == 0 {
			continue
		}
		if _, err := netip.ParseAddrPort(sp.Frontends[0]); err != nil {
			continue
		}
		proto := strings.ToLower(sp.Proto)
		if proto == "" {
			proto = "tcp"
		}
		return append(cmds, []string{"trace", "--dst=" + sp.Frontends[0], "--proto=" + proto, dir})
	}
	return cmds
}

var (
	addrCandidate = regexp.MustCompile(`[0-9A-Fa-f:.]*[0-9A-Fa-f]`)
	ipv4Text      = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}`)
	cidrText      = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}/[0-9]{1,2}`)
	macText       = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b`)
)

// originalAddrs lists the IP and MAC addresses of s that anonymization
// must replace: all but loopback, unspecified, multicast and broadcast.
func originalAddrs(s string) map[string]bool {
	found := map[string]bool{}
	add := func(c string) {
		ip, err := netip.ParseAddr(c)
		if err != nil || ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast() || c == "255.255.255.255" {
			return
		}
		if ip.Is4() || strings.Count(c, ":") >= 2 {
			found[ip.String()] = true
		}
	}
	for _, c := range addrCandidate.FindAllString(s, -1) {
		add(strings.Trim(c, ".:"))
		for _, q := range ipv4Text.FindAllString(c, -1) {
			add(q)
		}
	}
	for _, m := range macText.FindAllString(s, -1) {
		if l := strings.ToLower(m); l != "ff:ff:ff:ff:ff:ff" && l != "00:00:00:00:00:00" {
			found[l] = true
		}
	}
	return found
}

// containsWord reports whether s holds w not as part of a longer word,
// number or address.
func containsWord(s, w string) bool {
	s = strings.ToLower(s)
	w = strings.ToLower(w)
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before := start == 0 || !isWordish(s[start-1])
		after := end == len(s) || !isWordish(s[end]) || s[end] == '.' && (end+1 == len(s) || !isWordish(s[end+1]) || isDigit(s[end+1]))
		if s[end-1] == ':' || end < len(s) && s[end] == ':' && !strings.Contains(w, ":") {
			after = true
		}
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordish reports whether c continues a name or an address.
func isWordish(c byte) bool {
	return c >= 'a' && c <= 'z' || isDigit(c) || c == '.' || c == '_'
}

// No address or name of any fixture survives --anonymize in any format:
// not the addresses the plain reports hold, not the names of their
// subjects and inputs, not what the mapping lists. The anonymized reports
// have the same findings, by rule and fingerprint.
func TestAnonymizeEveryFixture(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs analyze twice on every fixture")
	}
	schema := testutil.Schema(t, "docs/report.schema.json",
		"https://raw.githubusercontent.com/netmortem/netmortem/main/docs/report.schema.json")
	all := anonFixtures(t)
	dirs := sampled(t, all)
	traced := 0
	defer func() {
		if want := atLeast(15, len(dirs), len(all)); traced < want {
			t.Errorf("trace ran on %d fixtures only, want %d", traced, want)
		}
	}()
	for _, dir := range dirs {
		name, _ := filepath.Rel(testutil.Root(), dir)
		t.Run(name, func(t *testing.T) {
			plainDir, anonDir := t.TempDir(), t.TempDir()
			plain := writeAll(t, dir, plainDir)
			mapPath := filepath.Join(anonDir, "map.json")
			anon := writeAll(t, dir, anonDir, "--anonymize-key", "test-key", "--anonymize-map", mapPath)
			otherCommands(t, dir, plain)
			otherCommands(t, dir, anon, "--anonymize-key", "test-key")
			for k := range anon {
				if strings.HasPrefix(k, "trace ") {
					traced++
				}
			}

			originals := map[string]bool{}
			for _, out := range plain {
				for a := range originalAddrs(out) {
					originals[a] = true
				}
			}
			var rep report.Report
			if err := json.Unmarshal([]byte(plain["json"]), &rep); err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if obj := f.Subject["object"]; obj != "" {
					if _, nsName, ok := strings.Cut(obj, " "); ok {
						for _, n := range strings.Split(nsName, "/") {
							if !systemLike(n) {
								originals[n] = true
							}
						}
					}
				}
			}
			for _, in := range rep.Inputs {
				if in.Node != "" && !systemLike(in.Node) {
					originals[in.Node] = true
				}
			}
			var mapping []struct{ Kind, Original, Token string }
			b, err := os.ReadFile(mapPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &mapping); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(mapPath); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("mapping file mode %v, %v: want readable by its owner only", fi.Mode(), err)
			}
			tokens := map[string]string{}
			mapped := map[string]bool{}
			for _, m := range mapping {
				originals[m.Original] = true
				tokens[m.Original] = m.Token
				addr, _, _ := strings.Cut(m.Original, "/") // a prefix maps its address
				mapped[m.Original], mapped[addr] = true, true
			}
			for a := range originals {
				if !mapped[a] && containsWord(plain["json"], a) {
					t.Errorf("%s is in the report but not in the mapping", a)
				}
			}
			for format, out := range anon {
				for o := range originals {
					if containsWord(out, o) {
						t.Errorf("-o %s: %q survives", format, o)
					}
				}
			}
			if err := testutil.Validate(schema, []byte(anon["json"])); err != nil {
				t.Errorf("the anonymized JSON report does not follow the schema: %v", err)
			}
			var arep report.Report
			if err := json.Unmarshal([]byte(anon["json"]), &arep); err != nil {
				t.Fatalf("anonymized JSON: %v", err)
			}
			if len(arep.Findings) != len(rep.Findings) {
				t.Fatalf("%d findings anonymized, %d plain", len(arep.Findings), len(rep.Findings))
			}
			for i, f := range rep.Findings {
				if g := arep.Findings[i]; g.Rule != f.Rule || g.Fingerprint != f.Fingerprint || g.Severity != f.Severity {
					t.Errorf("finding %d: %s %s anonymized as %s %s", i, f.Rule, f.Fingerprint, g.Rule, g.Fingerprint)
				}
			}
			// What was replaced shows as its token.
			for o, tok := range tokens {
				if containsWord(plain["json"], o) && !strings.Contains(anon["json"], tok) {
					t.Errorf("%s is in the plain report, its token %s not in the anonymized one", o, tok)
				}
			}
		})
	}
}

// systemLike reports whether name is one anonymization keeps.
func systemLike(name string) bool {
	for _, s := range []string{"kube-system", "default", "kubernetes", "kube-dns", "kube-proxy", "coredns", "etcd", "ingress-nginx", "kube-apiserver"} {
		if name == s || strings.HasPrefix(name, s+"-") {
			return true
		}
	}
	return false
}

// The same key gives the same reports; --anonymize alone gives other
// tokens each run; no mapping file is written unless asked for.
func TestAnonymizeKey(t *testing.T) {
	dir := fixture("incidents/stale-dnat")
	run := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(t, append(append([]string{"analyze", "-q", "-o", "json", "--fail-on", "never"}, args...), dir)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return out
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	a, b := run("--anonymize-key", "k1"), run("--anonymize", "--anonymize-key", "k1")
	if stripTool(a) != stripTool(b) {
		t.Error("the same key gave two reports")
	}
	c, d := run("--anonymize"), run("--anonymize")
	if stripTool(c) == stripTool(d) {
		t.Error("two runs with random keys gave the same report")
	}
	if strings.Contains(a, "10.96.0.10") || !strings.Contains(run(), "10.96.0.10") {
		t.Error("the kube-dns ClusterIP is not replaced, or not in the plain report")
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Errorf("files written without --anonymize-map: %v", entries)
	}
}

// stripTool drops the tool block, which holds build details.
func stripTool(s string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return s
	}
	delete(m, "tool")
	b, _ := json.Marshal(m)
	return string(b)
}

// batch --anonymize: no address of the plain lines, nor any name the
// mapping lists, survives in the lines; the lines keep their findings;
// --resume is refused without a key.
func TestAnonymizeBatch(t *testing.T) {
	glob := fixture("incidents/*")
	all, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	// The glob, or under -race the sampled bundles named one by one.
	operands, bundles := []string{glob}, sampled(t, all)
	if len(bundles) < len(all) {
		operands = bundles
	}
	code, plain, stderr := runCLI(t, append([]string{"batch", "-q", "--fail-on", "never"}, operands...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mapPath := filepath.Join(t.TempDir(), "map.json")
	// A key of the test's own. With a random one, the prefix-preserving
	// mapping now and then makes an original's token another original
	// (10.83.0.0/24 became 10.96.0.0/24, beside the service range
	// 10.96.0.0/12), or a short prefix its own token (10.96.0.0/12 when
	// its first 12 bits map to themselves), which a search for the
	// original's words cannot tell from an address that survived. This key
	// makes neither (checked below).
	const key = "anonymize-batch-test"
	code, anonymized, stderr := runCLI(t, append([]string{"batch", "-q", "--fail-on", "never", "--anonymize-key", key,
		"--anonymize-map", mapPath}, operands...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	originals := originalAddrs(plain)
	var mapping []struct{ Kind, Original, Token string }
	b, err := os.ReadFile(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mapping); err != nil {
		t.Fatal(err)
	}
	for _, m := range mapping {
		originals[m.Original] = true
	}
	if want := atLeast(50, len(bundles), len(all)); len(originals) < want {
		t.Fatalf("only %d originals, want %d: %v", len(originals), want, originals)
	}
	// The tokens the key makes, those of the prefixes it maps to themselves
	// (which the map leaves out) included.
	tokens := map[string]bool{}
	for _, m := range mapping {
		addr, _, _ := strings.Cut(m.Token, "/")
		tokens[m.Token], tokens[addr] = true, true
	}
	an := anon.New(key)
	for _, c := range cidrText.FindAllString(plain, -1) {
		if p, err := netip.ParsePrefix(c); err == nil {
			tokens[an.Prefix(p).Addr().String()] = true
		}
	}
	for o := range originals {
		if tokens[o] {
			t.Fatalf("the test's key makes %q, an original, a token (its own or another's): it needs a key that does not", o)
		}
		if containsWord(anonymized, o) {
			t.Errorf("%q survives", o)
		}
	}
	if p, a := strings.Count(plain, `"fingerprint"`), strings.Count(anonymized, `"fingerprint"`); p != a || p == 0 {
		t.Errorf("%d findings plain, %d anonymized", p, a)
	}
	t.Setenv(keyEnv, "")
	code, _, stderr = runCLI(t, "batch", "--resume", "--out", filepath.Join(t.TempDir(), "r.jsonl"), "--anonymize", glob)
	if code != exitUsage || !strings.Contains(stderr, "needs the key the earlier run used (--anonymize-key-file FILE") {
		t.Errorf("--resume with --anonymize and no key: exit %d, want %d; stderr %q", code, exitUsage, stderr)
	}
}
