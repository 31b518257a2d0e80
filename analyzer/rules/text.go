package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// plural returns one when n is 1, many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// times says how often something happened: "once", "3 times".
func times(n int) string { return plural(n, "once", fmt.Sprintf("%d times", n)) }

// maxListed bounds how many addresses a finding's title names.
const maxListed = 5

// listSome names items (client addresses, MACs), the first maxListed of
// them and how many more; more says there are others beyond items.
func listSome(items []string, more bool) string { return listUpTo(items, maxListed, more) }

// listUpTo names the first limit items and how many more.
func listUpTo(items []string, limit int, more bool) string {
	if len(items) <= limit {
		l := strings.Join(items, ", ")
		if more {
			l += " and more"
		}
		return l
	}
	n := fmt.Sprintf("%d", len(items)-limit)
	if more {
		n = "over " + n
	}
	return fmt.Sprintf("%s and %s more", strings.Join(items[:limit], ", "), n)
}

// joinPorts lists ports: "30080, 30443".
func joinPorts(ports []uint16) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ", ")
}

// orNone joins l, or says "not shown" when it is empty.
func orNone(l []string) string {
	if len(l) == 0 {
		return "not shown"
	}
	return strings.Join(l, ", ")
}

// firstLine returns the first line of s: a log message's own, before the
// output it quotes.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// nodeName names a node, or says it has no name.
func nodeName(n string) string {
	if n == "" {
		return "an unnamed node"
	}
	return n
}

// onNode is " on <node>", or "" when the node is not known.
func onNode(n string) string {
	if n == "" {
		return ""
	}
	return " on " + n
}

// logTime picks a layout for a log time: without the year when the log did
// not give one (klog).
func logTime(t time.Time) string {
	if t.Year() <= 1 {
		return "Jan 2 15:04:05.000000"
	}
	return time.RFC3339Nano
}

// objectName names a namespaced object "namespace/name", or "name" alone
// when its namespace is not known: a kubectl table listed without
// --all-namespaces and without -n has no NAMESPACE column.
func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// kubectlIn is the kubectl command for objects of namespace ns: "kubectl -n
// ns", or "kubectl" alone when the namespace is not known.
func kubectlIn(ns string) string {
	if ns == "" {
		return "kubectl"
	}
	return "kubectl -n " + shq.Quote(ns)
}

// collected returns the exact command line of the collector's command
// name (collect.Commands), after note as a "# " comment line when note
// is not empty: a finding's Decide that names what the collector runs, so
// that the report's next_evidence asks for the same command.
func collected(name, note string) string {
	shell := name
	if c, ok := collect.Lookup(name); ok {
		shell = c.Shell
	}
	if note == "" {
		return shell
	}
	return "# " + note + "\n" + shell
}

// firstOr returns the first of l, or def when l is empty.
func firstOr(l []string, def string) string {
	if len(l) == 0 {
		return def
	}
	return l[0]
}

// logText is a log line's message and its fields' values, in the order of
// their keys, one a line: what a rule searches for words a component may
// log in either (klog's err="..." or err=< ... >).
func logText(le *model.LogEvent) string {
	if len(le.Fields) == 0 {
		return le.Message
	}
	keys := slices.Sorted(maps.Keys(le.Fields))
	var b strings.Builder
	b.WriteString(le.Message)
	for _, k := range keys {
		b.WriteString("\n")
		b.WriteString(le.Fields[k])
	}
	return b.String()
}
