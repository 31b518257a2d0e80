package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer/rules"
)

// TestDecideIsShell holds that every Decide a user is told to paste is
// shell: each line a "# " comment or commands whose first words are
// programs, with no prose around them. It takes the Decide of every rule,
// of every finding and candidate of the field, incident and seed bundles,
// and the decide: pinned in the rule scenarios' want.yaml.
func TestDecideIsShell(t *testing.T) {
	where := map[string]string{}
	add := func(decide, from string) {
		if decide != "" && where[decide] == "" {
			where[decide] = from
		}
	}
	all := rules.All()
	for _, r := range all {
		add(r.Decide, "rule "+r.Name)
	}
	dirs := bundleDirs(t, 100, "the field cases, incidents and seeds", "../fixtures/field/*", "../fixtures/incidents/*", "../fixtures/seeds/*")
	for _, dir := range dirs {
		_, res := analyzeDir(t, dir, all)
		for _, f := range res.Findings {
			add(f.Decide, dir+": "+f.Rule)
			for _, c := range f.Candidates {
				add(c.Decide, dir+": "+f.Rule+"'s candidate "+c.Rule)
			}
		}
	}
	wants, err := filepath.Glob("../analyzer/rules/testdata/*/*/want.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(wants) < 100 {
		t.Fatalf("found %d scenario want.yaml, want at least 100", len(wants))
	}
	for _, w := range wants {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		for _, d := range yamlDecides(doc) {
			add(d, w)
		}
	}
	if len(where) < 50 {
		t.Fatalf("found %d distinct Decide, want at least 50", len(where))
	}
	var keys []string
	for d := range where {
		keys = append(keys, d)
	}
	sort.Strings(keys)
	for _, d := range keys {
		if err := checkDecide(d); err != nil {
			t.Errorf("%s: Decide %q: %v", where[d], d, err)
		}
	}
}

// yamlDecides returns the values of the keys "decide" anywhere in doc.
func yamlDecides(doc any) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "decide" {
				out = append(out, s)
				continue
			}
			out = append(out, yamlDecides(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, yamlDecides(x)...)
		}
	}
	return out
}

// connectives are English words that, outside quotes, mark prose in a
// command line ("ss -lnt on the node").
var connectives = map[string]bool{
	"on": true, "from": true, "and": true, "the": true, "against": true, "or": true, "then": true,
	"with": true, "while": true, "to": true, "of": true, "a": true, "an": true, "is": true, "are": true,
	"after": true, "before": true, "each": true, "where": true, "when": true, "its": true, "it": true,
	"that": true, "which": true, "twice": true, "apart": true, "there": true, "at": true,
}

// programWord is what a command's first word may be: a program name or
// path, or an assignment.
var programWord = regexp.MustCompile(`^([a-z][a-z0-9_.+-]*|/[A-Za-z0-9_./-]+|[A-Z_]+=\S*)$`)

// shellKeywords may open a command without being a program.
var shellKeywords = map[string]bool{"for": true, "do": true, "done": true, "if": true, "fi": true, "while": true}

// checkDecide returns why decide is not pure shell, or nil.
func checkDecide(decide string) error {
	for _, line := range strings.Split(decide, "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			return fmt.Errorf("line %q: empty, or a comment not opened by \"# \"", line)
		}
		if out, err := exec.Command("sh", "-n", "-c", line).CombinedOutput(); err != nil {
			return fmt.Errorf("line %q: sh -n: %v: %s", line, err, out)
		}
		if err := checkWords(line); err != nil {
			return fmt.Errorf("line %q: %w", line, err)
		}
	}
	return nil
}

// checkWords checks the words of line outside quotes: no English
// connective, no parenthesis, placeholder in angle brackets or bracket
// pattern, and each command's first word a program.
func checkWords(line string) error {
	var words []string
	var cur strings.Builder
	quoted, first := false, true
	flush := func() error {
		if cur.Len() == 0 && !quoted {
			return nil
		}
		w := cur.String()
		cur.Reset()
		if first {
			if !shellKeywords[w] && !programWord.MatchString(w) {
				return fmt.Errorf("command opens with %q, not a program", w)
			}
			first = shellKeywords[w] && w != "for"
		}
		words = append(words, w)
		return nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return fmt.Errorf("unclosed quote")
			}
			cur.WriteString("Q")
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
				}
			}
			cur.WriteString("Q")
			i = j
		case c == '\\':
			i++
			cur.WriteString("Q")
		case c == ' ' || c == '\t':
			if err := flush(); err != nil {
				return err
			}
		case c == '&' && i > 0 && line[i-1] == '>':
			cur.WriteByte(c)
		case c == ';' || c == '|' || c == '&':
			if err := flush(); err != nil {
				return err
			}
			if c == '&' && (i+1 >= len(line) || line[i+1] != '&') && (i == 0 || line[i-1] != '&') {
				return fmt.Errorf("a lone & outside quotes")
			}
			first = true
		case c == '(' || c == ')':
			return fmt.Errorf("a parenthesis outside quotes: prose belongs in a \"# \" comment line")
		case c == '<':
			return fmt.Errorf("a < outside quotes: a placeholder is a word in capitals")
		case c == '[' || c == ']':
			return fmt.Errorf("a bracket outside quotes: a pattern that zsh rejects when nothing matches")
		default:
			cur.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for _, w := range words {
		if connectives[strings.TrimRight(strings.ToLower(w), ",.:")] || strings.HasSuffix(w, ",") || strings.HasSuffix(w, ":") {
			return fmt.Errorf("%q outside quotes is prose: put it in a \"# \" comment line", w)
		}
	}
	return nil
}

// TestCheckDecide holds that checkDecide accepts commands and rejects
// the prose around them.
func TestCheckDecide(t *testing.T) {
	for _, ok := range []string{
		"ss -tanpi",
		"# on the node: the listener\nss -lntup",
		"sysctl -a 2>/dev/null | grep '^net\\.'",
		"conntrack -S; sysctl net.netfilter.nf_conntrack_max && dmesg | grep nf_conntrack",
		"for f in /sys/class/net/docker0/brif/*/hairpin_mode; do echo \"$f $(cat $f)\"; done",
		"kubectl get svc -A -o 'custom-columns=NAME:.spec.ports[*].nodePort' | grep 30007",
		"ss -anp '( sport = :45102 )'",
	} {
		if err := checkDecide(ok); err != nil {
			t.Errorf("checkDecide(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{
		"ss -anp '( sport = :45102 )' on the node; sysctl net.ipv4.ip_local_port_range",
		"ss -tanpi (the processes holding connections)",
		"arping -c 3 10.7.4.231 from a host on the nodes' network",
		"in the Pod: ss -tan",
		"ipvsadm -Lnc | grep <client Pod IP>",
		"kubectl get svc -o custom-columns=N:.spec.ports[*].nodePort",
		"tcpdump -ni any icmp or icmp6",
		"#no space\nss -tanpi",
		"ss -tanpi\n",
	} {
		if checkDecide(bad) == nil {
			t.Errorf("checkDecide(%q) = nil, want an error", bad)
		}
	}
}
