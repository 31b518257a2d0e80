//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hostileName is a name a hostile bundle gives a Pod, a Service, an Event
// and a file: shell syntax that would run "touch" if pasted unquoted, HTML,
// a javascript: link, backticks, a right-to-left override and a newline.
const hostileName = "etcd-cp-1$(touch PWNED1)`touch PWNED2`;touch PWNED3|touch PWNED4" +
	"<img src=x onerror=alert(1)>[x](javascript:alert(1))\u202e\nforged"

// pasteBundle is the probe-restart-loop incident with hostileName as
// its Pod's and its Events' name, Event messages and a log file's name of
// the same kind, a Service named so, and its capture under a name that a
// spreadsheet would read as a formula.
func pasteBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := fixture("incidents/probe-restart-loop")
	js, _ := json.Marshal(hostileName)
	inJSON := string(js[1 : len(js)-1])
	for name, to := range map[string]string{
		"pods-kube-system.json":   "pods-kube-system.json",
		"events-kube-system.json": "events-kube-system.json",
		"etcd.yaml":               "etcd.yaml",
		"nodes.json":              "nodes.json",
		"etcd.log":                "etcd" + hostileName + ".log",
	} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.HasSuffix(name, ".json") {
			s = strings.ReplaceAll(s, `"etcd-cp-1`, `"`+inJSON)
			s = strings.ReplaceAll(s, "will be restarted", "will be restarted "+inJSON)
		}
		if err := os.WriteFile(filepath.Join(dir, to), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svc := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"` + inJSON +
		`","namespace":"kube-system"},"spec":{"clusterIP":"10.96.0.99","ports":[{"port":53,"protocol":"UDP"}]}}]}`
	if err := os.WriteFile(filepath.Join(dir, "services.json"), []byte(svc), 0o644); err != nil {
		t.Fatal(err)
	}
	pcap, err := os.ReadFile(fixture("incidents/stale-dnat/capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, `=HYPERLINK("http:x")`+hostileName+".pcap"), pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileNamesPasteSafe is the hostile-name bundle in every output: each
// command printed passes sh -n and, run with a PATH of stubs that record
// what runs, runs nothing of the names' payloads; Markdown and SARIF carry
// no HTML, no link and no bidi override; no CSV cell is a formula.
func TestHostileNamesPasteSafe(t *testing.T) {
	dir := pasteBundle(t)
	out := map[string]string{}
	for _, format := range []string{"table", "text", "json", "markdown", "sarif"} {
		code, stdout, stderr := runCLI(t, "analyze", "-q", "-o", format, dir)
		if code != exitFindings {
			t.Fatalf("-o %s: exit %d, want %d; stderr:\n%s", format, code, exitFindings, stderr)
		}
		out[format] = stdout
	}
	commands := hostileCommands(t, out)
	if len(commands) < 3 {
		t.Fatalf("%d commands in the outputs, want the Fix, a Decide and the next evidence: %q", len(commands), commands)
	}
	stubs := stubDir(t)
	for _, c := range commands {
		checkCommand(t, c, stubs)
	}
	checkMarkdown(t, out["markdown"])
	checkSARIF(t, out["sarif"])

	code, csvOut, stderr := runCLI(t, "flows", "-o", "csv", dir)
	if code != 0 {
		t.Fatalf("flows -o csv: exit %d; stderr:\n%s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("flows -o csv: %d rows, %v", len(rows), err)
	}
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("flows -o csv: cell %q would be read as a formula", cell)
			}
		}
	}
}

// hostileCommands returns the commands the outputs print: the code spans
// of the Markdown Fix lines (the one form whose spans a name's backticks
// cannot end), each also in the table form; the "To decide, run"
// lines of the text formats; the next evidence of the JSON form.
func hostileCommands(t *testing.T, out map[string]string) []string {
	var commands []string
	for _, l := range strings.Split(out["markdown"], "\n") {
		if strings.HasPrefix(l, "**Fix.** ") {
			_, spans := codeSpans(l)
			commands = append(commands, spans...)
		}
	}
	for _, c := range commands {
		if !strings.Contains(out["table"], "`"+c+"`") {
			t.Errorf("-o table does not print the command %q", c)
		}
	}
	for _, l := range strings.Split(out["text"]+"\n"+out["table"], "\n") {
		if _, c, ok := strings.Cut(l, "To decide, run: "); ok {
			commands = append(commands, c)
		}
	}
	var rep struct {
		NextEvidence []struct{ Shell string } `json:"next_evidence"`
	}
	if err := json.Unmarshal([]byte(out["json"]), &rep); err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.NextEvidence {
		commands = append(commands, e.Shell)
	}
	slices.Sort(commands)
	commands = slices.Compact(commands)
	if !slices.ContainsFunc(commands, func(c string) bool { return strings.Contains(c, "PWNED1") }) {
		t.Errorf("no command names the hostile Pod: %q", commands)
	}
	return commands
}

// stubPrograms are the programs the commands run, and those the names'
// payloads would.
var stubPrograms = []string{"kubectl", "touch", "alert", "iptables-save", "ss", "grep", "tail", "head", "cat", "ps",
	"conntrack", "sysctl", "ip", "timeout", "tcpdump", "crictl", "nstat", "ipvsadm", "nft", "bridge", "ethtool", "dmesg", "curl", "id", "forged"}

// stubDir makes a directory of stubs, one per stubPrograms, each writing
// its name to the file calls beside it.
func stubDir(t *testing.T) string {
	dir := t.TempDir()
	for _, p := range stubPrograms {
		script := "#!/bin/sh\nprintf '%s\\n' " + p + " >> " + filepath.Join(dir, "calls") + "\n"
		if err := os.WriteFile(filepath.Join(dir, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkCommand has sh parse c, then run it with PATH the stubs alone, in
// an empty directory: it runs its own program, never touch, and creates
// nothing.
func checkCommand(t *testing.T, c, stubs string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sh, "-n", "-c", c).CombinedOutput(); err != nil {
		t.Errorf("sh -n -c %q: %v\n%s", c, err, out)
		return
	}
	work := t.TempDir()
	os.Remove(filepath.Join(stubs, "calls"))
	cmd := exec.Command(sh, "-c", c)
	cmd.Dir, cmd.Env = work, []string{"PATH=" + stubs, "HOME=" + work}
	_ = cmd.Run() // a stub's status, or 127 for a program not stubbed
	b, _ := os.ReadFile(filepath.Join(stubs, "calls"))
	calls := strings.Fields(string(b))
	if slices.ContainsFunc(calls, func(p string) bool { return p == "touch" || p == "alert" || p == "forged" }) {
		t.Errorf("sh -c %q ran %q: a name's payload", c, calls)
	}
	if first := strings.Fields(c)[0]; slices.Contains(stubPrograms, first) && !slices.Contains(calls, first) {
		t.Errorf("sh -c %q ran %q, not its program %s", c, calls, first)
	}
	if entries, _ := os.ReadDir(work); len(entries) > 0 {
		t.Errorf("sh -c %q created %v", c, entries)
	}
}

var (
	mdHTMLRe = regexp.MustCompile(`<[a-zA-Z/!?]`)
	mdLinkRe = regexp.MustCompile(`(^|[^\\])\]\(|(^|[^\\])\][\[:]|^\s*(- )?\[`)
)

// checkMarkdown: outside code spans, no HTML but the Facts' <details>, no
// link, no entity reference; no bidi override anywhere; no line forged.
func checkMarkdown(t *testing.T, md string) {
	if strings.ContainsRune(md, '\u202e') {
		t.Errorf("markdown holds U+202E")
	}
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "forged") {
			t.Errorf("markdown line forged by a newline in a name: %q", l)
		}
		if l == "<details><summary>Facts</summary>" || l == "</details>" {
			continue
		}
		prose, _ := codeSpans(l)
		if mdHTMLRe.MatchString(prose) || mdLinkRe.MatchString(prose) || strings.Contains(prose, "&#") {
			t.Errorf("markdown has HTML or a link outside code spans: %q\n(prose %q)", l, prose)
		}
	}
}

// codeSpans splits a Markdown line as CommonMark reads its code spans (a
// run of n backticks closes at the next run of exactly n): the prose
// without them, and their contents.
func codeSpans(l string) (prose string, spans []string) {
	var out strings.Builder
	for i := 0; i < len(l); {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			out.WriteString(l[i : i+2])
			i += 2
			continue
		case l[i] != '`':
			out.WriteByte(l[i])
			i++
			continue
		}
		n := 0
		for i+n < len(l) && l[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(l); {
			if l[j] != '`' {
				j++
				continue
			}
			k := j
			for k < len(l) && l[k] == '`' {
				k++
			}
			if k-j == n {
				end = j
				break
			}
			j = k
		}
		if end < 0 {
			out.WriteString(l[i : i+n])
			i += n
			continue
		}
		c := l[i+n : end]
		if len(c) > 2 && c[0] == ' ' && c[len(c)-1] == ' ' {
			c = c[1 : len(c)-1]
		}
		spans = append(spans, c)
		i = end + n
	}
	return out.String(), spans
}

// checkSARIF: every message text escapes its brackets and holds no bidi
// override or control character.
func checkSARIF(t *testing.T, s string) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if (key == "message" || key == "description") && k == "text" {
					text, _ := x.(string)
					n++
					bare := strings.NewReplacer(`\\`, "", `\[`, "", `\]`, "").Replace(text)
					if strings.ContainsAny(bare, "[]\n\r\u202e") {
						t.Errorf("SARIF %s text %q: an unescaped bracket, a line break or a bidi override", key, text)
					}
					continue
				}
				walk(x, k)
			}
		case []any:
			for _, x := range v {
				walk(x, key)
			}
		}
	}
	walk(v, "")
	if n < 3 {
		t.Errorf("SARIF: %d message texts", n)
	}
}
