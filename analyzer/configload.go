package analyzer

import (
	"bytes"

	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// configLoader reads a Config from YAML nodes, collecting every error
// with its line.
type configLoader struct {
	file  string
	rules []*Rule
	errs  []error
}

// ConfigKeys are the top-level keys of a configuration file.
var ConfigKeys = []string{"rules", "ignore"}

// RuleConfigKeys are the keys of a rule's entry under rules.
var RuleConfigKeys = []string{"disabled", "severity", "params"}

// IgnoreSelectors are the keys of an ignore entry that select findings.
var IgnoreSelectors = []string{"fingerprint", "rule", "node", "namespace", "object", "address"}

// IgnoreKeys are every key of an ignore entry.
var IgnoreKeys = append(slices.Clone(IgnoreSelectors), "reason", "expires")

// DateLayout is the layout of an ignore entry's expires: YYYY-MM-DD.
const DateLayout = "2006-01-02"

var yamlLine = lazyre.New(`^yaml: line (\d+): (.*)$`)

func (l *configLoader) errorf(n *yaml.Node, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	l.errs = append(l.errs, fmt.Errorf("%s:%d: %s", l.file, line, fmt.Sprintf(format, args...)))
}

func (l *configLoader) load(b []byte) *Config {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return c
		}
		l.syntax(b, err)
		return c
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		l.errorf(&extra, "a second YAML document: expected one")
	} else if err != io.EOF {
		l.syntax(b, err)
	}
	top := &doc
	if top.Kind == yaml.DocumentNode {
		if len(top.Content) == 0 {
			return c
		}
		top = top.Content[0]
	}
	top = resolve(top)
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return c
	}
	l.mapping(top, "the top level", ConfigKeys, func(k, v *yaml.Node) {
		switch k.Value {
		case "rules":
			l.loadRules(c, v)
		case "ignore":
			l.loadIgnore(c, v)
		}
	})
	return c
}

func (l *configLoader) syntax(b []byte, err error) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		l.errs = append(l.errs, fmt.Errorf("%s:%s: %s", l.file, m[1], m[2]))
		return
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	l.errs = append(l.errs, fmt.Errorf("%s:%d: %s", l.file, unlinedErrorLine(b, msg), msg))
}

// unlinedErrorLine finds the line of a YAML error that does not say: the
// last line for the end of the input, else the first line with a control
// character or invalid UTF-8, else the first.
func unlinedErrorLine(b []byte, msg string) int {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if strings.Contains(msg, "end of stream") {
		return len(lines)
	}
	for i, line := range lines {
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool {
			return r != '\t' && r != '\r' && (unicode.IsControl(r) || r == 0xfeff)
		}) {
			return i + 1
		}
	}
	return 1
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapping calls each for each key of n, a mapping whose keys are among
// keys (nil: any), reporting unknown and repeated keys.
func (l *configLoader) mapping(n *yaml.Node, what string, keys []string, each func(k, v *yaml.Node)) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // a key without a value: nothing set
	}
	if n.Kind != yaml.MappingNode {
		if keys == nil {
			l.errorf(n, "%s: expected a mapping, got %s", what, describe(n))
		} else {
			l.errorf(n, "%s: expected a mapping with the keys %s, got %s", what, orList(keys), describe(n))
		}
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, "%s: expected a key, got %s", what, describe(k))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			l.errorf(k, "%s: %q given twice (first at line %d)", what, k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		if keys != nil && !slices.Contains(keys, k.Value) {
			l.errorf(k, "%s: unknown key %q%s (want %s)", what, k.Value, didYouMean(k.Value, keys), orList(keys))
			continue
		}
		each(k, v)
	}
}

func (l *configLoader) loadRules(c *Config, n *yaml.Node) {
	names := make([]string, 0, len(l.rules))
	for _, r := range l.rules {
		names = append(names, r.Name)
	}
	c.Rules = map[string]RuleConfig{}
	l.mapping(n, "rules", nil, func(k, v *yaml.Node) {
		i := slices.Index(names, k.Value)
		if i < 0 {
			l.errorf(k, "rules: unknown rule %q%s (netmortem rules lists them)", k.Value, didYouMean(k.Value, names))
			return
		}
		r := l.rules[i]
		var rc RuleConfig
		what := "rules." + r.Name
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			c.Rules[r.Name] = rc
			return
		}
		l.mapping(v, what, RuleConfigKeys, func(k, v *yaml.Node) {
			switch k.Value {
			case "disabled":
				if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
					l.errorf(v, "%s.disabled: expected true or false, got %s", what, describe(v))
					return
				}
				rc.Disabled, _ = strconv.ParseBool(v.Value)
			case "severity":
				s, err := ParseSeverity(v.Value)
				if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || err != nil {
					l.errorf(v, "%s.severity: expected info, warning or error, got %s", what, describe(v))
					return
				}
				rc.Severity = s
			case "params":
				rc.Params = l.loadParams(r, what+".params", v)
			}
		})
		c.Rules[r.Name] = rc
	})
}

func (l *configLoader) loadParams(r *Rule, what string, n *yaml.Node) map[string]float64 {
	out := map[string]float64{}
	var names []string
	for _, p := range r.Params {
		names = append(names, p.Name)
	}
	l.mapping(n, what, nil, func(k, v *yaml.Node) {
		p := r.param(k.Value)
		if p == nil {
			if len(names) == 0 {
				l.errorf(k, "%s: unknown parameter %q: rule %s has no parameters", what, k.Value, r.Name)
			} else {
				l.errorf(k, "%s: unknown parameter %q%s of rule %s (want %s)", what, k.Value, didYouMean(k.Value, names), r.Name, orList(names))
			}
			return
		}
		f, err := strconv.ParseFloat(v.Value, 64)
		want := "an integer " + p.Range.String()
		if p.Type == Number {
			want = "a number " + p.Range.String()
		}
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || err != nil || p.check(f) != "" {
			l.errorf(v, "%s.%s: expected %s, got %s", what, k.Value, want, describe(v))
			return
		}
		out[k.Value] = f
	})
	return out
}

func (l *configLoader) loadIgnore(c *Config, n *yaml.Node) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "ignore: expected a list of entries, got %s", describe(n))
		return
	}
	for _, e := range n.Content {
		e = resolve(e)
		if e.Kind != yaml.MappingNode {
			l.errorf(e, "ignore entry: expected a mapping with the keys %s, got %s", orList(IgnoreKeys), describe(e))
			continue
		}
		ig := Ignore{Pos: fmt.Sprintf("%s:%d", l.file, e.Line), File: l.file, Line: e.Line}
		selectors := 0
		errs := len(l.errs)
		valueAt := map[string]*yaml.Node{}
		l.mapping(e, "ignore entry", IgnoreKeys, func(k, v *yaml.Node) {
			what := "ignore." + k.Value
			valueAt[k.Value] = v
			if slices.Contains(IgnoreSelectors, k.Value) {
				selectors++
			}
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" {
				l.errorf(v, "%s: expected a string, got %s", what, describe(v))
				return
			}
			s := v.Value
			if msg := l.checkSelector(k.Value, s); msg != "" {
				l.errorf(v, "%s: expected %s, got %q", what, msg, s)
				return
			}
			switch k.Value {
			case "fingerprint":
				ig.Fingerprint = strings.ToLower(s) // as -o json writes it
			case "rule":
				ig.Rule = s
			case "node":
				ig.Node = s
			case "namespace":
				ig.Namespace = s
			case "object":
				ig.Object = s
			case "address":
				ig.Address = s
			case "reason":
				ig.Reason = strings.TrimSpace(s)
			case "expires":
				ig.Expires, _ = time.Parse(DateLayout, s)
			}
		})
		if selectors == 0 && len(l.errs) == errs { // else an unknown key is likely a selector misspelt
			l.errorf(e, "ignore entry has no selector: expected at least one of %s", orList(IgnoreSelectors))
		}
		if ig.Reason == "" {
			l.errorf(e, "ignore entry has no reason: expected reason: why these findings are suppressed")
		}
		l.checkSubjectKeys(&ig, valueAt)
		c.Ignore = append(c.Ignore, ig)
	}
}

// selectorKeys are the subject keys each selector reads, one of which a
// finding's subject must be able to hold for the selector to match it.
var selectorKeys = map[string][]string{
	"node":      {"node"},
	"namespace": {"namespace", "object"},
	"object":    {"object"},
	"address":   addressKeys,
}

// checkSubjectKeys reports the selectors of an entry for one rule that the
// rule's findings can never match: their subjects lack the keys the
// selector reads (when the rule declares its SubjectKeys).
func (l *configLoader) checkSubjectKeys(ig *Ignore, valueAt map[string]*yaml.Node) {
	var r *Rule
	for _, x := range l.rules {
		if x.Name == ig.Rule {
			r = x
		}
	}
	if r == nil || len(r.SubjectKeys) == 0 {
		return
	}
	if v, ok := valueAt["object"]; ok && len(r.ObjectKinds) > 0 {
		if kind, _, _ := splitObject(v.Value); kind != "" && !slices.ContainsFunc(r.ObjectKinds, func(k string) bool { return strings.EqualFold(k, kind) }) {
			l.errorf(v, "ignore.object: the findings of %s never match it: their objects are of the kind %s", r.Name, orList(r.ObjectKinds))
		}
	}
	for _, sel := range []string{"node", "namespace", "object", "address"} {
		v, ok := valueAt[sel]
		if !ok || slices.ContainsFunc(selectorKeys[sel], func(k string) bool { return slices.Contains(r.SubjectKeys, k) }) {
			continue
		}
		l.errorf(v, "ignore.%s: the findings of %s never match it: their subject holds %s, not %s", sel, r.Name,
			strings.Join(r.SubjectKeys, ", "), orList(selectorKeys[sel]))
	}
}

var fingerprintSyntax = lazyre.New(`^[0-9a-fA-F]{16}(-[0-9]+)?$`)

// checkSelector says what a value of the ignore key should be, when s is
// not one, or "".
func (l *configLoader) checkSelector(key, s string) string {
	switch key {
	case "fingerprint":
		if !fingerprintSyntax.MatchString(s) {
			return "16 hexadecimal digits (a finding's fingerprint)"
		}
	case "rule":
		var names []string
		for _, r := range l.rules {
			names = append(names, r.Name)
		}
		if !slices.Contains(names, s) {
			return "a rule's name" + didYouMean(s, names)
		}
	case "object":
		kind, _, ok := splitObject(s)
		if !ok {
			return `"Kind namespace/name" or "namespace/name"`
		}
		if kinds := l.objectKinds(); kind != "" && kinds != nil && !slices.ContainsFunc(kinds, func(k string) bool { return strings.EqualFold(k, kind) }) {
			lower := make([]string, len(kinds))
			for i, k := range kinds {
				lower[i] = strings.ToLower(k)
			}
			hint := ""
			if best := didYouMeanName(strings.ToLower(kind), lower); best != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", kinds[slices.Index(lower, best)]+" "+strings.TrimPrefix(s, kind+" "))
			}
			return "an object of a kind the rules' findings name, " + orList(kinds) + hint
		}
	case "address":
		if _, ok := parseIPOrAddrPort(s); !ok {
			if _, err := netip.ParsePrefix(s); err != nil {
				return "an IP, IP:port or CIDR prefix"
			}
		}
	case "expires":
		if _, err := time.Parse(DateLayout, s); err != nil {
			return "a date YYYY-MM-DD"
		}
	}
	return ""
}

// splitObject splits an object selector "Kind ns/name", "Kind name" or
// "ns/name" into its kind (maybe empty) and the rest.
func splitObject(s string) (kind, ref string, ok bool) {
	kind, ref, hasKind := strings.Cut(s, " ")
	if !hasKind {
		kind, ref = "", s
	}
	if ref == "" || strings.ContainsAny(ref, " ") || strings.Count(ref, "/") > 1 ||
		strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || (!hasKind && !strings.Contains(ref, "/")) {
		return "", "", false
	}
	return kind, ref, true
}

// describe names what a node holds, for an error.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// orList writes "a, b or c".
func orList(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " or " + l[len(l)-1]
}

// didYouMean returns ` (did you mean "x"?)` for the one of names closest
// to s, when it is close, or "".
func didYouMean(s string, names []string) string {
	best := didYouMeanName(s, names)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// didYouMeanName returns the one of names closest to s, when it is
// close, or "".
func didYouMeanName(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// objectKinds returns the kinds of object the rules' subjects name, sorted;
// nil when a rule whose subjects hold an object does not declare them.
func (l *configLoader) objectKinds() []string {
	var kinds []string
	for _, r := range l.rules {
		if !slices.Contains(r.SubjectKeys, "object") {
			continue
		}
		if len(r.ObjectKinds) == 0 {
			return nil
		}
		kinds = append(kinds, r.ObjectKinds...)
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
