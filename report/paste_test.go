package report

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

const evilPod = "etcd-cp-1$(touch pwned)`id`<img src=x onerror=alert(1)>[x](javascript:alert(1))\u202e"

// evilFinding is a finding whose rule wrote a hostile Pod name into its
// Fix and Decide commands as it is.
func evilFinding() analyzer.Finding {
	return analyzer.Finding{
		Rule: "probe-restart-loop", Severity: analyzer.Warning, Certainty: analyzer.Unknown,
		Title:   evilPod + " restarted 5 times",
		Summary: "Pod kube-system/" + evilPod + " restarts.",
		Fix:     "Run the probe by hand (`kubectl -n kube-system exec " + evilPod + " -c etcd -- true`) and fix what fails.",
		Decide:  "kubectl -n kube-system describe pod " + evilPod + " (the Events of " + evilPod + ")",
		Subject: map[string]string{"object": "Pod kube-system/" + evilPod, "container": "etcd"},
		Facts:   map[string]any{"pod": evilPod},
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "pods/" + evilPod + ".json", Line: 1, Object: "Pod kube-system/" + evilPod},
			Note: "[click](javascript:alert(1)) <script>alert(1)</script>"}},
	}
}

func TestPasteSafe(t *testing.T) {
	f := pasteSafe(evilFinding())
	q := `'etcd-cp-1$(touch pwned)` + "`id`" + `<img src=x onerror=alert(1)>[x](javascript:alert(1))` + "\u202e'"
	if want := "kubectl -n kube-system describe pod " + q + " (the Events of " + q + ")"; f.Decide != want {
		t.Errorf("Decide = %q\nwant %q", f.Decide, want)
	}
	if want := "Run the probe by hand (`kubectl -n kube-system exec " + q + " -c etcd -- true`) and fix what fails."; f.Fix != want {
		t.Errorf("Fix = %q\nwant %q", f.Fix, want)
	}
	nested := analyzer.Finding{Decide: "ip link show " + evilPod, Facts: map[string]any{"links": []any{map[string]any{"name": evilPod}}}}
	if got := pasteSafe(nested).Decide; got != "ip link show "+q {
		t.Errorf("a name in nested facts: Decide = %q", got)
	}
	plainF := analyzer.Finding{Fix: "Run `kubectl -n ns logs p`.", Decide: "ss -lntp (the 'x' listener)", Subject: map[string]string{"object": "Pod ns/p"}}
	if got := pasteSafe(plainF); got.Fix != plainF.Fix || got.Decide != plainF.Decide {
		t.Errorf("pasteSafe changed a finding with ordinary names: %+v", got)
	}
	command, note := decideParts(f.Decide)
	if !strings.HasSuffix(command, q) || !strings.HasPrefix(note, "the Events") {
		t.Errorf("decideParts(%q) = %q, %q", f.Decide, command, note)
	}
}

// TestDecideLineShell has sh check and run each command the text formats
// print for the hostile finding: nothing runs but the command's program.
func TestDecideLineShell(t *testing.T) {
	f := pasteSafe(evilFinding())
	var lines []string
	lines = append(lines, decideLine(f.Decide))
	for _, s := range splitSpans(f.Fix, mdAtoms(f)) {
		if s.code {
			lines = append(lines, s.text)
		}
	}
	for _, l := range lines {
		out, err := exec.Command("sh", "-c", "kubectl() { printf '%s\\n' \"$@\"; }; "+l).CombinedOutput()
		if err != nil {
			t.Errorf("sh -c %q: %v\n%s", l, err, out)
		}
		if !strings.Contains(string(out), evilPod) {
			t.Errorf("sh -c %q did not pass the Pod name whole:\n%s", l, out)
		}
	}
}

var (
	mdLink = regexp.MustCompile(`[^\\]\]\(`)
	mdHTML = regexp.MustCompile(`<[a-zA-Z/!?]`)
)

// TestMarkdownInert renders the hostile finding: no HTML, no link, and the
// Fix command in one code span that its backticks cannot close.
func TestMarkdownInert(t *testing.T) {
	r := New(&model.Snapshot{}, model.ErrorList{&model.Error{Pos: model.Pos{File: "x"}, Text: evilPod, Err: errString("bad " + evilPod)}},
		analyzer.Result{Findings: []analyzer.Finding{evilFinding()}})
	r.Incomplete = []string{"[x](javascript:alert(1)): cut <b>"}
	var b bytes.Buffer
	if err := writeMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		prose := stripCode(l)
		if strings.HasPrefix(l, "<details>") || strings.HasPrefix(l, "</details>") {
			continue
		}
		if mdHTML.MatchString(prose) || mdLink.MatchString(prose) || strings.Contains(prose, "&#") {
			t.Errorf("markdown line has HTML or a link outside code: %q (prose %q)", l, prose)
		}
	}
	want := "(`` kubectl -n kube-system exec 'etcd-cp-1$(touch pwned)`id`<img src=x onerror=alert(1)>[x](javascript:alert(1))\\u202e' -c etcd -- true ``)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("markdown Fix command is not %s:\n%s", want, b.String())
	}
}

// stripCode removes the code spans of a Markdown line, read as
// CommonMark does: a run of n backticks closes only at a run of n.
func stripCode(l string) string {
	var out strings.Builder
	for i := 0; i < len(l); {
		if l[i] == '\\' && i+1 < len(l) {
			out.WriteString(l[i : i+2])
			i += 2
			continue
		}
		if l[i] != '`' {
			out.WriteByte(l[i])
			i++
			continue
		}
		n := 0
		for i+n < len(l) && l[i+n] == '`' {
			n++
		}
		fence := strings.Repeat("`", n)
		end := -1
		for j := i + n; j < len(l); {
			k := strings.Index(l[j:], fence)
			if k < 0 {
				break
			}
			k += j
			if (k+n >= len(l) || l[k+n] != '`') && (k == 0 || l[k-1] != '`') {
				end = k
				break
			}
			for j = k; j < len(l) && l[j] == '`'; j++ {
			}
		}
		if end < 0 {
			out.WriteString(fence)
			i += n
			continue
		}
		i = end + n
	}
	return out.String()
}

type errString string

func (e errString) Error() string { return string(e) }

func TestSARIFMessageInert(t *testing.T) {
	r := New(&model.Snapshot{}, nil, analyzer.Result{Findings: []analyzer.Finding{evilFinding()}})
	var b bytes.Buffer
	if err := writeSARIF(&b, r); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message   struct{ Text string }
				Locations []struct{ Message *struct{ Text string } }
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, res := range log.Runs[0].Results {
		texts = append(texts, res.Message.Text)
		for _, l := range res.Locations {
			if l.Message != nil {
				texts = append(texts, l.Message.Text)
			}
		}
	}
	if len(texts) < 2 {
		t.Fatalf("SARIF messages: %q", texts)
	}
	for _, s := range texts {
		if mdLink.MatchString(s) || strings.ContainsRune(s, '\u202e') || strings.ContainsAny(strings.ReplaceAll(strings.ReplaceAll(s, `\[`, ""), `\]`, ""), "[]") {
			t.Errorf("SARIF message %q has a link, a bracket or a bidi override", s)
		}
	}
}

func TestMdText(t *testing.T) {
	for in, want := range map[string]string{
		"plain [rule] text":         "plain [rule] text",
		"[x](javascript:a)":         `\[x\](javascript:a)`,
		"a <b> &amp; && c":          "a &lt;b> &amp;amp; && c",
		"?a=1&b=2; x&y":             "?a=1&b=2; x&y",
		"[ref]: http://x":           `\[ref]: http://x`,
		"a`b":                       "a\\`b",
		"![i][r]":                   `![i\][r]`,
		"[fd00::1]:53 answers":      `\[fd00::1]:53 answers`,
		"x [fd00::1]:53 answers":    "x [fd00::1]:53 answers",
		"&#x6A;avascript":           "&amp;#x6A;avascript",
		"a ] ( not a link":          "a ] ( not a link",
		"see ]( here":               `see \]( here`,
		"nothing to escape: 1 > 0!": "nothing to escape: 1 > 0!",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPasteSafeSnapshotNames: a name of the bundle that a rule wrote into
// a command without recording it in its finding is quoted too.
func TestPasteSafeSnapshotNames(t *testing.T) {
	dev := "br$(id)`x`"
	snap := &model.Snapshot{Links: []model.Link{{Dev: "eth0", Master: dev}}}
	r := New(snap, nil, analyzer.Result{Findings: []analyzer.Finding{{Rule: "hairpin-drop", Severity: analyzer.Warning,
		Decide: "bridge fdb show br " + dev + " (the port the Pod's MAC address is learned on)",
		Fix:    "Turn hairpin on: `bridge link set dev veth1 hairpin on` on " + dev + "."}}})
	f := r.Findings[0]
	if want := "bridge fdb show br 'br$(id)`x`' (the port the Pod's MAC address is learned on)"; f.Decide != want {
		t.Errorf("Decide = %q, want %q", f.Decide, want)
	}
	if f.Fix != "Turn hairpin on: `bridge link set dev veth1 hairpin on` on "+dev+"." {
		t.Errorf("Fix = %q: its prose changed", f.Fix)
	}
	var b bytes.Buffer
	if err := writeMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "To decide, run: `` bridge fdb show br 'br$(id)`x`' `` (the port") {
		t.Errorf("markdown Decide is not one code span:\n%s", b.String())
	}
}

// A name the rule quoted itself (leaked-established-ports' destination
// "<openstack-api-vip>:443", a redaction in a real ticket) is not quoted
// again: quoting it twice put its "<" outside the quotes, a redirection.
func TestPasteSafeQuotedOnce(t *testing.T) {
	dest := "<openstack-api-vip>:443"
	f := pasteSafe(analyzer.Finding{Rule: "leaked-established-ports", Subject: map[string]string{"address": dest},
		Decide: "ss -tan dst '" + dest + "' | awk '{print $1}'\nss -tan dst " + dest,
		Fix:    "Count them (`ss -tan dst '" + dest + "'`)."})
	if want := "ss -tan dst '" + dest + "' | awk '{print $1}'\nss -tan dst '" + dest + "'"; f.Decide != want {
		t.Errorf("Decide = %q\nwant %q", f.Decide, want)
	}
	if want := "Count them (`ss -tan dst '" + dest + "'`)."; f.Fix != want {
		t.Errorf("Fix = %q\nwant %q", f.Fix, want)
	}
}
