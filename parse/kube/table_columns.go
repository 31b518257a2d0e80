package kube

import (
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/parse/internal/text"
)

type tableKind int

const (
	tkUnknown tableKind = iota
	tkService
	tkPod
	tkNode
	tkComponentStatus
	tkIngress
	tkEndpoints
)

var tableKindNames = [...]string{"", "Service", "Pod", "Node", "ComponentStatus", "Ingress", "Endpoints"}

// tableKindOf maps a kubectl resource argument to a kind.
func tableKindOf(resource string) tableKind {
	r := strings.ToLower(resource)
	if i := strings.IndexByte(r, '/'); i >= 0 {
		r = r[:i]
	}
	if i := strings.IndexByte(r, '.'); i >= 0 {
		r = r[:i] // ingresses.networking.k8s.io
	}
	switch r {
	case "svc", "service", "services":
		return tkService
	case "po", "pod", "pods":
		return tkPod
	case "no", "node", "nodes":
		return tkNode
	case "cs", "componentstatus", "componentstatuses":
		return tkComponentStatus
	case "ing", "ingress", "ingresses":
		return tkIngress
	case "ep", "endpoint", "endpoints":
		return tkEndpoints
	}
	return tkUnknown
}

// tableLayouts are the column sets kubectl prints for each kind, used for
// rows without a header. The NAMESPACE column of -A is added in front.
var tableLayouts = map[tableKind][][]string{
	tkService: {
		{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"},
		{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"},
	},
	tkPod: {
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE"},
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"},
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE"},
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"},
	},
	tkNode: {
		{"NAME", "STATUS", "ROLES", "AGE", "VERSION"},
		{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"},
	},
	tkComponentStatus: {
		{"NAME", "STATUS", "MESSAGE"},
	},
	tkIngress: {
		{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"},
		{"NAME", "HOSTS", "ADDRESS", "PORTS", "AGE"},
	},
	tkEndpoints: {
		{"NAME", "ENDPOINTS", "AGE"},
	},
}

// cellSpec says how many whitespace-separated words a cell may have and
// what it must look like.
type cellSpec struct {
	min, max int // max < 0: any number
	ok       func(string) bool
}

var (
	ageRe       = lazyre.New(`^(?:<unknown>|<invalid>|(?:\d+y)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?)$`)
	svcPortsRe  = lazyre.New(`^(?:<none>|\d+(?::\d+)?/(?:TCP|UDP|SCTP)(?:,\d+(?::\d+)?/(?:TCP|UDP|SCTP))*)$`)
	readyRe     = lazyre.New(`^\d+/\d+$`)
	restartsRe  = lazyre.New(`^\d+(?: \(\S+ ago\))?$`)
	podStatusRe = lazyre.New(`^[A-Za-z][A-Za-z0-9:/._-]*$`)
	nodeStatRe  = lazyre.New(`^(?:Ready|NotReady|Unknown)(?:,[A-Za-z]+)*$`)
	rolesRe     = lazyre.New(`^(?:<none>|[a-z0-9][a-z0-9._/-]*(?:,[a-z0-9][a-z0-9._/-]*)*)$`)
	versionRe   = lazyre.New(`^v\d+\.\d+\S*$`)
	kernelRe    = lazyre.New(`^(?:<unknown>|\d+\.\d+\S*)$`)
	runtimeRe   = lazyre.New(`^(?:<unknown>|[a-z0-9.-]+://\S*)$`)
	nsRe        = lazyre.New(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	ingPortsRe  = lazyre.New(`^\d+(?:, \d+)*$`)
	moreRe      = lazyre.New(`^(\S+) \+ (\d+) more\.\.\.$`)
	addrListRe  = lazyre.New(`^[A-Za-z0-9.:\[\]_*-]+(?:,[A-Za-z0-9.:\[\]_*-]+)*(?:\.\.\.)?$`)
	headerColRe = lazyre.New(`^[A-Z][A-Z0-9()/_.:-]*$`)
)

func oneWord(s string) bool { return s != "" && !strings.ContainsAny(s, " \t") }

func isIPCell(s string) bool {
	if s == "<none>" {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// isAddrList matches comma-separated IPs and host names, possibly cut
// short with "...", and the placeholders kubectl prints.
func isAddrList(s string) bool {
	switch s {
	case "<none>", "<pending>", "<unknown>":
		return true
	}
	return addrListRe.MatchString(s) && strings.ContainsAny(s, ".:") || s == "*"
}

func isEndpointsCell(s string) bool {
	if s == "<none>" {
		return true
	}
	if m := moreRe.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if !oneWord(s) {
		return false
	}
	for _, e := range strings.Split(s, ",") {
		if _, err := netip.ParseAddrPort(e); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(e); err == nil {
			continue
		}
		return false
	}
	return true
}

func isHostsCell(s string) bool {
	if m := moreRe.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if s == "*" {
		return true
	}
	return oneWord(s) && addrListRe.MatchString(s) && !strings.HasSuffix(s, "...")
}

func re(r *lazyre.Regexp) func(string) bool { return r.MatchString }

var (
	oneAny  = cellSpec{1, 1, oneWord}
	freeTxt = cellSpec{0, -1, func(string) bool { return true }}
)

// cellSpecFor returns the shape of a column's cells in a table of kind.
func cellSpecFor(kind tableKind, col string) cellSpec {
	switch col {
	case "NAME":
		return oneAny
	case "NAMESPACE":
		return cellSpec{1, 1, re(nsRe)}
	case "AGE":
		return cellSpec{1, 1, func(s string) bool { return s != "" && ageRe.MatchString(s) }}
	}
	switch kind {
	case tkService:
		switch col {
		case "TYPE":
			return cellSpec{1, 1, func(s string) bool {
				return s == "ClusterIP" || s == "NodePort" || s == "LoadBalancer" || s == "ExternalName"
			}}
		case "CLUSTER-IP":
			return cellSpec{1, 1, func(s string) bool { return s == "None" || isIPCell(s) }}
		case "EXTERNAL-IP":
			return cellSpec{1, 1, func(s string) bool { return isAddrList(s) && (s == "<none>" || !svcPortsRe.MatchString(s)) }}
		case "PORT(S)":
			return cellSpec{1, 1, re(svcPortsRe)}
		}
	case tkPod:
		switch col {
		case "READY":
			return cellSpec{1, 1, re(readyRe)}
		case "STATUS":
			return cellSpec{1, 1, re(podStatusRe)}
		case "RESTARTS":
			return cellSpec{1, 3, re(restartsRe)}
		case "IP":
			return cellSpec{1, 1, isIPCell}
		}
	case tkNode:
		switch col {
		case "STATUS":
			return cellSpec{1, 1, re(nodeStatRe)}
		case "ROLES":
			return cellSpec{1, 1, re(rolesRe)}
		case "VERSION":
			return cellSpec{1, 1, re(versionRe)}
		case "INTERNAL-IP", "EXTERNAL-IP":
			return cellSpec{1, 1, isIPCell}
		case "OS-IMAGE":
			return cellSpec{1, -1, func(s string) bool { return s != "" }}
		case "KERNEL-VERSION":
			return cellSpec{1, 1, re(kernelRe)}
		case "CONTAINER-RUNTIME":
			return cellSpec{1, 1, re(runtimeRe)}
		}
	case tkComponentStatus:
		switch col {
		case "STATUS":
			return cellSpec{1, 1, func(s string) bool { return s == "Healthy" || s == "Unhealthy" || s == "Unknown" }}
		case "MESSAGE", "ERROR":
			return freeTxt
		}
	case tkIngress:
		switch col {
		case "CLASS":
			return oneAny
		case "HOSTS":
			return cellSpec{1, 4, isHostsCell}
		case "ADDRESS":
			return cellSpec{0, 1, func(s string) bool { return s == "" || isAddrList(s) }}
		case "PORTS":
			return cellSpec{1, 3, re(ingPortsRe)}
		}
	case tkEndpoints:
		if col == "ENDPOINTS" {
			return cellSpec{1, 4, isEndpointsCell}
		}
	}
	switch col {
	case "NODE", "NOMINATED NODE", "READINESS GATES", "SELECTOR", "LABELS":
		return oneAny
	}
	// Columns of -L: one word, empty when the label is not set.
	return cellSpec{0, 1, func(string) bool { return true }}
}

// tableHeader is a header line: its columns, where each starts (in
// characters), and the kind they belong to.
type tableHeader struct {
	kind   tableKind
	cols   []string
	starts []int
	specs  []cellSpec
}

func newHeader(kind tableKind, cols []string, starts []int) *tableHeader {
	h := &tableHeader{kind: kind, cols: cols, starts: starts}
	for _, c := range cols {
		h.specs = append(h.specs, cellSpecFor(kind, c))
	}
	return h
}

// twoWordColumns are the headers kubectl prints with a space inside.
var twoWordColumns = map[string]string{"NOMINATED": "NODE", "READINESS": "GATES"}

// parseTableHeader recognizes a kubectl header line; ok is true for any
// header, known is false when its columns are of a kind not read here.
func parseTableHeader(line string) (h *tableHeader, ok bool) {
	if !strings.HasPrefix(line, "NAME") {
		return nil, false
	}
	var cols []string
	var starts []int
	pos := 0
	for _, w := range strings.SplitAfter(line, " ") {
		word := strings.TrimSpace(w)
		if word != "" {
			n := len(cols)
			if n > 0 && twoWordColumns[cols[n-1]] == word {
				cols[n-1] += " " + word
			} else {
				cols = append(cols, word)
				starts = append(starts, pos)
			}
		}
		pos += utf8.RuneCountInString(w)
	}
	if len(cols) < 2 || len(cols) > 32 {
		return nil, false
	}
	first := 0
	if cols[0] == "NAMESPACE" {
		first = 1
	}
	if cols[first] != "NAME" {
		return nil, false
	}
	has := map[string]bool{}
	for _, c := range cols {
		if !headerColRe.MatchString(c) && !strings.Contains(c, " ") {
			return nil, false
		}
		has[c] = true
	}
	kind := tkUnknown
	switch {
	case has["TYPE"] && has["CLUSTER-IP"]:
		kind = tkService
	case has["READY"] && has["STATUS"] && has["RESTARTS"]:
		kind = tkPod
	case has["STATUS"] && has["VERSION"]:
		kind = tkNode
	case has["STATUS"] && has["MESSAGE"]:
		kind = tkComponentStatus
	case has["HOSTS"] && has["ADDRESS"] && has["PORTS"]:
		kind = tkIngress
	case has["ENDPOINTS"] && len(cols) <= 4:
		kind = tkEndpoints
	}
	return newHeader(kind, cols, starts), true
}

// maxTableAddresses bounds the endpoint addresses without an IP that the
// counts and elisions ("+ N more...") of one input stand for, together; the
// endpoints controller keeps at most 1000 per object.
const maxTableAddresses = 100000

// maxRowWords bounds the words of one row, so that fitting stays cheap.
const maxRowWords = 256

// split cuts a row into the header's cells: by the header's positions when
// the row lines up with them, else by fitting the words to the cells'
// shapes. aligned tells which.
func (h *tableHeader) split(line string) (cells []string, aligned, ok bool) {
	if cells, ok := h.splitAligned(line); ok {
		return cells, true, true
	}
	cells, ok = fitCells(h.specs, strings.Fields(line))
	return cells, false, ok
}

func (h *tableHeader) splitAligned(line string) ([]string, bool) {
	if len(h.starts) == 0 {
		return nil, false
	}
	r := []rune(line)
	cells := make([]string, len(h.cols))
	for i, s := range h.starts {
		if s > len(r) {
			s = len(r)
		}
		end := len(r)
		if i+1 < len(h.starts) {
			end = h.starts[i+1]
			if end > len(r) {
				end = len(r)
			}
			// The next cell must start at its column: a space before it.
			if end < len(r) && r[end-1] != ' ' {
				return nil, false
			}
		}
		if s > end {
			s = end
		}
		if i == 0 && s > 0 && strings.TrimSpace(string(r[:s])) != "" {
			return nil, false
		}
		cell := strings.TrimSpace(string(r[s:end]))
		sp := h.specs[i]
		n := len(strings.Fields(cell))
		if n < sp.min || sp.max >= 0 && n > sp.max || !sp.ok(text.CollapseSpace(cell)) {
			return nil, false
		}
		cells[i] = cell
	}
	return cells, true
}

// wordsFit reports whether n words can make the cells specs: as many as
// the cells take at least, and no more than they take at most. A line
// of other text, of more words than a table's row, is told so without
// being fitted cell by cell.
func wordsFit(specs []cellSpec, n int) bool {
	lo, hi := 0, 0
	for _, sp := range specs {
		lo += sp.min
		if sp.max < 0 || hi < 0 {
			hi = -1
		} else {
			hi += sp.max
		}
	}
	return n >= lo && (hi < 0 || n <= hi)
}

// fitCells assigns words to cells so that every cell has the shape of its
// spec, trying longer cells first. Cells are cut from the words joined by
// single spaces, and failed states are remembered, so the search stays
// polynomial.
func fitCells(specs []cellSpec, words []string) ([]string, bool) {
	if len(words) > maxRowWords || len(specs) == 0 || !wordsFit(specs, len(words)) {
		return nil, false
	}
	joined := strings.Join(words, " ")
	starts := make([]int, len(words)+1)
	for i, w := range words {
		starts[i+1] = starts[i] + len(w) + 1
	}
	cut := func(j, n int) string {
		if n == 0 {
			return ""
		}
		return joined[starts[j] : starts[j+n]-1]
	}
	out := make([]string, len(specs))
	failed := make([]bool, (len(specs)+1)*(len(words)+1))
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if i == len(specs) {
			return j == len(words)
		}
		if failed[i*(len(words)+1)+j] {
			return false
		}
		sp := specs[i]
		hi := len(words) - j
		if sp.max >= 0 && sp.max < hi {
			hi = sp.max
		}
		for n := hi; n >= sp.min; n-- {
			cell := cut(j, n)
			if !sp.ok(cell) {
				continue
			}
			out[i] = cell
			if rec(i+1, j+n) {
				return true
			}
		}
		failed[i*(len(words)+1)+j] = true
		return false
	}
	if !rec(0, 0) {
		return nil, false
	}
	return out, true
}
