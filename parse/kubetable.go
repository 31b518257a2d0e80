package parse

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// kubeTableFormat reads the text tables of `kubectl get`.
var kubeTableFormat = &Format{
	Name:    "kubectl-table",
	Kind:    model.KindKube,
	Command: "kubectl get svc|pods|nodes|cs|ingress|endpoints [-A] [-o wide]",
	Sniff:   sniffKubeTable,
	Parse: func(_ context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		t := newTableReader(src.Name, src.Node, src.Command, &errs)
		t.read(r)
		for kind, n := range t.counts {
			src.Count(kind, n)
		}
		snap.Kube.Merge(t.k)
		return t.k.Len(), errs.Err()
	},
}

// KubectlTable reads the text tables `kubectl get` prints for Services,
// Pods, Nodes, ComponentStatuses, Ingresses and Endpoints: with or without
// the NAMESPACE column of -A, with the extra columns of -o wide, and rows
// cut out with grep whose header is gone (the kind and the columns are then
// taken from the pasted command line, or inferred from the shape of the
// cells). Columns are found from the header's positions when the rows line
// up with it, and from the cells' shapes when pasting collapsed the spaces.
// Several tables may follow each other, each after its command line or
// header.
//
// The objects carry what the table shows (Source.FromTable is set) and
// every cell as printed in Source.Cells. Where a table only gives a total,
// the total is kept: a Pod's RESTARTS go to its first container status (the
// others get 0), and the endpoints an ENDPOINTS cell elides ("+ 3 more...")
// are addresses without an IP. A namespace comes from the NAMESPACE column,
// else from the command's -n, else it is left empty (unknown). The count
// `kubectl get endpoints NAME -o json | jq '.subsets[0].addresses' | jq
// length` prints is read as that many addresses without an IP.
func KubectlTable(r io.Reader, name string) (*model.Kube, error) {
	var errs model.ErrorList
	t := newTableReader(name, "", "", &errs)
	t.read(r)
	return t.k, errs.Err()
}

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
	ageRe       = regexp.MustCompile(`^(?:<unknown>|<invalid>|(?:\d+y)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?)$`)
	svcPortsRe  = regexp.MustCompile(`^(?:<none>|\d+(?::\d+)?/(?:TCP|UDP|SCTP)(?:,\d+(?::\d+)?/(?:TCP|UDP|SCTP))*)$`)
	readyRe     = regexp.MustCompile(`^\d+/\d+$`)
	restartsRe  = regexp.MustCompile(`^\d+(?: \(\S+ ago\))?$`)
	podStatusRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9:/._-]*$`)
	nodeStatRe  = regexp.MustCompile(`^(?:Ready|NotReady|Unknown)(?:,[A-Za-z]+)*$`)
	rolesRe     = regexp.MustCompile(`^(?:<none>|[a-z0-9][a-z0-9._/-]*(?:,[a-z0-9][a-z0-9._/-]*)*)$`)
	versionRe   = regexp.MustCompile(`^v\d+\.\d+\S*$`)
	kernelRe    = regexp.MustCompile(`^(?:<unknown>|\d+\.\d+\S*)$`)
	runtimeRe   = regexp.MustCompile(`^(?:<unknown>|[a-z0-9.-]+://\S*)$`)
	nsRe        = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	ingPortsRe  = regexp.MustCompile(`^\d+(?:, \d+)*$`)
	moreRe      = regexp.MustCompile(`^(\S+) \+ (\d+) more\.\.\.$`)
	addrListRe  = regexp.MustCompile(`^[A-Za-z0-9.:\[\]_*-]+(?:,[A-Za-z0-9.:\[\]_*-]+)*(?:\.\.\.)?$`)
	headerColRe = regexp.MustCompile(`^[A-Z][A-Z0-9()/_.:-]*$`)
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

func re(r *regexp.Regexp) func(string) bool { return r.MatchString }

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

// fitCells assigns words to cells so that every cell has the shape of its
// spec, trying longer cells first. Cells are cut from the words joined by
// single spaces, and failed states are remembered, so the search stays
// polynomial.
func fitCells(specs []cellSpec, words []string) ([]string, bool) {
	if len(words) > maxRowWords || len(specs) == 0 {
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

// tableCmd is what a pasted kubectl command says about the table after it.
type tableCmd struct {
	kind      tableKind
	namespace string
	allNS     bool
	wide      bool
	names     []string
	// countOf is set for `... get endpoints NAME -o json | jq ... | jq
	// length`: the list whose length follows ("addresses" or
	// "notReadyAddresses").
	countOf string
	// other names the one resource of a kind not read here
	// ("deployments"), whose rows are skipped.
	other string
}

func readTableCmd(cmd string) (tableCmd, bool) {
	k, ok := text.ParseKubectl(cmd)
	if !ok || k.Verb != "get" {
		return tableCmd{}, false
	}
	c := tableCmd{namespace: k.Namespace, allNS: k.AllNS, wide: k.Output == "wide"}
	if len(k.Args) > 0 {
		res := k.Args[0]
		if !strings.Contains(res, ",") {
			c.kind = tableKindOf(res)
			if c.kind == tkUnknown && res != "all" {
				c.other = res
			}
		}
		if _, name, ok := strings.Cut(res, "/"); ok {
			c.names = append(c.names, name)
		}
		c.names = append(c.names, k.Args[1:]...)
	}
	if c.kind == tkEndpoints && len(c.names) == 1 && len(k.Pipes) > 0 &&
		strings.Contains(k.Pipes[len(k.Pipes)-1], "length") {
		all := strings.Join(append([]string{k.Output}, k.Pipes...), "|")
		switch {
		case strings.Contains(all, "notReadyAddresses"):
			c.countOf = "notReadyAddresses"
		case strings.Contains(all, "addresses"):
			c.countOf = "addresses"
		}
	}
	return c, true
}

// tableReader reads kubectl tables line by line. With dry set it only
// classifies lines (for sniffing).
type tableReader struct {
	name, node string
	errs       *model.ErrorList
	k          *model.Kube
	counts     map[string]int
	dry        bool

	cmd        tableCmd
	hasCmd     bool
	cands      []*tableHeader // candidates() for cmd, built on first use
	hdr        *tableHeader
	unknownHdr bool
	// unknownAddrs counts the addresses without an IP made so far.
	unknownAddrs int

	// for sniffing
	headers, rows, bad, cmds int
}

func newTableReader(name, node, command string, errs *model.ErrorList) *tableReader {
	t := &tableReader{name: name, node: node, errs: errs, k: &model.Kube{}, counts: map[string]int{}}
	if c, ok := readTableCmd(command); ok {
		t.cmd, t.hasCmd = c, true
	}
	return t
}

func (t *tableReader) read(r io.Reader) {
	l := text.NewLines(r, t.name, t.errs)
	for l.Next() {
		t.line(l.Text(), l.Line(), l.Errorf)
	}
}

// kubectlNoise are lines kubectl (or the person pasting) adds around
// tables: messages, warnings and elisions.
func kubectlNoise(t string) bool {
	for _, p := range []string{"No resources found", "Warning:", "error:", "Error from server", "...", "…", "[...]"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func (t *tableReader) line(line string, n int, errorf func(string, ...any)) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" {
		t.hdr, t.unknownHdr = nil, false
		return
	}
	if node, ok := text.NodeMarker(line); ok {
		t.node = node
		return
	}
	if host, cmd, ok := text.ShellCommand(line); ok {
		t.hdr, t.unknownHdr = nil, false
		if host != "" {
			t.node = host
		}
		t.cmd, t.hasCmd = readTableCmd(cmd)
		t.cands = nil
		if t.hasCmd && (t.cmd.kind != tkUnknown || t.cmd.countOf != "") {
			t.cmds++
		}
		return
	}
	if kubectlNoise(trimmed) {
		return
	}
	if h, ok := parseTableHeader(trimmed); ok {
		t.hdr, t.unknownHdr = h, h.kind == tkUnknown
		if t.unknownHdr {
			t.bad++
			errorf("kubectl table of a kind not read (columns %s): its rows are skipped", strings.Join(h.cols, ", "))
		} else {
			t.headers++
		}
		return
	}
	if t.unknownHdr {
		return
	}
	if t.hdr == nil && t.hasCmd && t.cmd.other != "" {
		// Rows of `kubectl get deployments` without their header.
		t.unknownHdr = true
		t.bad++
		errorf("kubectl get %s: a kind not read: its rows are skipped", t.cmd.other)
		return
	}
	if t.hasCmd && t.cmd.countOf != "" {
		if v, err := strconv.Atoi(trimmed); err == nil && v >= 0 {
			if t.unknownAddrs+v > maxTableAddresses {
				errorf("%w: %d endpoint addresses: more than %d in one input", ErrValue, v, maxTableAddresses)
				return
			}
			t.unknownAddrs += v
			t.rows++
			if !t.dry {
				t.addEndpointsCount(v, n)
			}
			return
		}
	}
	h, cells, aligned := t.fit(trimmed)
	if h == nil {
		t.bad++
		if t.hdr != nil {
			errorf("%w: expected a row of the %s table (%s)", ErrSyntax, tableKindNames[t.hdr.kind], strings.Join(t.hdr.cols, ", "))
		} else {
			errorf("%w: expected a kubectl get table: a header (NAME ...) or a row of services, pods, nodes, componentstatuses, ingresses or endpoints", ErrSyntax)
		}
		return
	}
	t.rows++
	if t.dry {
		return
	}
	if err := t.add(h, cells, aligned, n); err != nil {
		errorf("%w", err)
	}
}

// fit finds the columns of a row: those of the current header, else those
// of the layouts the command line or the cells' shapes allow.
func (t *tableReader) fit(row string) (*tableHeader, []string, bool) {
	if t.hdr != nil {
		cells, aligned, ok := t.hdr.split(row)
		if !ok {
			return nil, nil, false
		}
		return t.hdr, cells, aligned
	}
	words := strings.Fields(row)
	if t.cands == nil {
		t.cands = t.candidates()
	}
	for _, h := range t.cands {
		if cells, ok := fitCells(h.specs, words); ok {
			return h, cells, false
		}
	}
	return nil, nil, false
}

// candidates lists the headers a row without one may have: those of the
// command's kind (the NAMESPACE column first if it used -A, -o wide first
// if it asked for it), else those of every kind whose cells have shapes
// distinctive enough to tell it from other text.
func (t *tableReader) candidates() []*tableHeader {
	kinds := []tableKind{tkService, tkPod, tkNode, tkIngress, tkEndpoints}
	nsFirst := true
	wideFirst := false
	if t.hasCmd && t.cmd.kind != tkUnknown {
		kinds = []tableKind{t.cmd.kind}
		nsFirst = t.cmd.allNS
		wideFirst = t.cmd.wide
	}
	var out []*tableHeader
	for _, k := range kinds {
		layouts := tableLayouts[k]
		if wideFirst {
			rev := make([][]string, len(layouts))
			for i, l := range layouts {
				rev[len(layouts)-1-i] = l
			}
			layouts = rev
		}
		for _, ns := range []bool{nsFirst, !nsFirst} {
			for _, cols := range layouts {
				if ns {
					cols = append([]string{"NAMESPACE"}, cols...)
				}
				out = append(out, newHeader(k, cols, nil))
			}
		}
	}
	return out
}

// rowObject holds what every kind's row gives.
type rowObject struct {
	name, ns string
	cells    map[string]string
	src      model.Source
}

func (t *tableReader) add(h *tableHeader, cells []string, aligned bool, line int) error {
	o := rowObject{cells: map[string]string{}, ns: t.cmd.namespace}
	for i, c := range h.cols {
		if cells[i] != "" {
			o.cells[c] = cells[i]
		}
	}
	o.name = o.cells["NAME"]
	if i := strings.LastIndexByte(o.name, '/'); i >= 0 {
		o.name = o.name[i+1:] // service/kube-dns, as kubectl get all prints it
	}
	if ns, ok := o.cells["NAMESPACE"]; ok {
		o.ns = ns
	}
	if h.kind == tkNode || h.kind == tkComponentStatus {
		o.ns = ""
	}
	kind := tableKindNames[h.kind]
	o.src = model.Source{
		Pos:       model.Pos{File: t.name, Line: line, Object: model.ObjectName(kind, o.ns, o.name)},
		Node:      t.node,
		FromTable: true,
		Cells:     o.cells,
	}
	t.counts[kind]++
	switch h.kind {
	case tkService:
		return t.addService(o)
	case tkPod:
		return t.addPod(o)
	case tkNode:
		t.addNode(o)
	case tkComponentStatus:
		t.addComponentStatus(o, h, aligned)
	case tkIngress:
		t.addIngress(o)
	case tkEndpoints:
		return t.addEndpoints(o)
	}
	return nil
}

func (o *rowObject) meta(kind, apiVersion string) (metav1.TypeMeta, metav1.ObjectMeta) {
	return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, metav1.ObjectMeta{Name: o.name, Namespace: o.ns}
}

// cellList splits a comma-separated cell, without kubectl's placeholders.
func cellList(s string) []string {
	switch s {
	case "", "<none>", "<pending>", "<unknown>", "<invalid>":
		return nil
	}
	return strings.Split(s, ",")
}

func (t *tableReader) addService(o rowObject) error {
	var svc corev1.Service
	svc.TypeMeta, svc.ObjectMeta = o.meta("Service", "v1")
	svc.Spec.Type = corev1.ServiceType(o.cells["TYPE"])
	if ip := o.cells["CLUSTER-IP"]; ip == "None" || isIPCell(ip) && ip != "<none>" {
		svc.Spec.ClusterIP = ip
		svc.Spec.ClusterIPs = []string{ip}
	}
	ext := o.cells["EXTERNAL-IP"]
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if ext != "<none>" {
			svc.Spec.ExternalName = ext
		}
	case corev1.ServiceTypeLoadBalancer:
		for _, a := range cellList(ext) {
			switch {
			case isIPCell(a):
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
			case !strings.HasSuffix(a, "..."): // cut short by kubectl: unknown
				svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: a})
			}
		}
	default:
		for _, a := range cellList(ext) {
			if isIPCell(a) {
				svc.Spec.ExternalIPs = append(svc.Spec.ExternalIPs, a)
			}
		}
	}
	if sel, ok := o.cells["SELECTOR"]; ok && sel != "<none>" {
		svc.Spec.Selector = map[string]string{}
		for _, kv := range strings.Split(sel, ",") {
			k, v, _ := strings.Cut(kv, "=")
			svc.Spec.Selector[k] = v
		}
	}
	var perr error
	for _, p := range cellList(o.cells["PORT(S)"]) {
		sp, err := parseServicePort(p)
		if err != nil {
			perr = err
			continue
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	t.k.Services = append(t.k.Services, model.Service{Service: svc, Source: o.src})
	return perr
}

// parseServicePort reads one entry of PORT(S): "80:32080/TCP" or "53/UDP".
func parseServicePort(s string) (corev1.ServicePort, error) {
	ports, proto, _ := strings.Cut(s, "/")
	port, node, hasNode := strings.Cut(ports, ":")
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return corev1.ServicePort{}, fmt.Errorf("%w: port %q in PORT(S): want 1-65535", ErrValue, s)
	}
	sp := corev1.ServicePort{Port: int32(p), Protocol: corev1.Protocol(proto)}
	if hasNode {
		np, err := strconv.ParseUint(node, 10, 16)
		if err != nil || np == 0 {
			return corev1.ServicePort{}, fmt.Errorf("%w: NodePort %q in PORT(S): want 1-65535", ErrValue, s)
		}
		sp.NodePort = int32(np)
	}
	return sp, nil
}

func (t *tableReader) addPod(o rowObject) error {
	var pod corev1.Pod
	pod.TypeMeta, pod.ObjectMeta = o.meta("Pod", "v1")
	var err error
	ready, total := 0, 0
	if r, tot, ok := strings.Cut(o.cells["READY"], "/"); ok {
		ready, _ = strconv.Atoi(r)
		total, _ = strconv.Atoi(tot)
	}
	if total > 64 {
		err = fmt.Errorf("%w: READY %q: more than 64 containers", ErrValue, o.cells["READY"])
		total = 0
	}
	restarts, _, _ := strings.Cut(o.cells["RESTARTS"], " ")
	nRestarts, rerr := strconv.ParseInt(restarts, 10, 32)
	if rerr != nil {
		err = fmt.Errorf("%w: RESTARTS %q: want a count", ErrValue, o.cells["RESTARTS"])
	}
	for i := 0; i < total; i++ {
		cs := corev1.ContainerStatus{Ready: i < ready}
		if i == 0 {
			cs.RestartCount = int32(nRestarts)
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
	switch st := corev1.PodPhase(o.cells["STATUS"]); st {
	case corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
		pod.Status.Phase = st
	default:
		pod.Status.Reason = string(st) // CrashLoopBackOff, Completed, Init:0/1 ...
	}
	if ip := o.cells["IP"]; ip != "" && ip != "<none>" {
		pod.Status.PodIP = ip
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	if n := o.cells["NODE"]; n != "" && n != "<none>" {
		pod.Spec.NodeName = n
	}
	if n := o.cells["NOMINATED NODE"]; n != "" && n != "<none>" {
		pod.Status.NominatedNodeName = n
	}
	t.k.Pods = append(t.k.Pods, model.Pod{Pod: pod, Source: o.src})
	return err
}

func (t *tableReader) addNode(o rowObject) {
	var node corev1.Node
	node.TypeMeta, node.ObjectMeta = o.meta("Node", "v1")
	for i, s := range strings.Split(o.cells["STATUS"], ",") {
		if i > 0 {
			if s == "SchedulingDisabled" {
				node.Spec.Unschedulable = true
			}
			continue
		}
		c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}
		switch s {
		case "Ready":
			c.Status = corev1.ConditionTrue
		case "NotReady":
			c.Status = corev1.ConditionFalse
		}
		node.Status.Conditions = append(node.Status.Conditions, c)
	}
	for _, r := range cellList(o.cells["ROLES"]) {
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels["node-role.kubernetes.io/"+r] = ""
	}
	info := &node.Status.NodeInfo
	info.KubeletVersion = o.cells["VERSION"]
	known := func(s string) string {
		if s == "<none>" || s == "<unknown>" {
			return ""
		}
		return s
	}
	if ip := known(o.cells["INTERNAL-IP"]); ip != "" {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	if ip := known(o.cells["EXTERNAL-IP"]); ip != "" {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip})
	}
	info.OSImage = known(o.cells["OS-IMAGE"])
	info.KernelVersion = known(o.cells["KERNEL-VERSION"])
	info.ContainerRuntimeVersion = known(o.cells["CONTAINER-RUNTIME"])
	t.k.Nodes = append(t.k.Nodes, model.Node{Node: node, Source: o.src})
}

// addComponentStatus: kubectl prints the Healthy condition's message and
// error. When the row's spaces were collapsed, the two cannot be told
// apart: the text is the error of an Unhealthy component if the header has
// an ERROR column, else the message.
func (t *tableReader) addComponentStatus(o rowObject, h *tableHeader, aligned bool) {
	var cs corev1.ComponentStatus
	cs.TypeMeta, cs.ObjectMeta = o.meta("ComponentStatus", "v1")
	c := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionUnknown,
		Message: o.cells["MESSAGE"], Error: o.cells["ERROR"]}
	switch o.cells["STATUS"] {
	case "Healthy":
		c.Status = corev1.ConditionTrue
	case "Unhealthy":
		c.Status = corev1.ConditionFalse
		hasErr := false
		for _, col := range h.cols {
			hasErr = hasErr || col == "ERROR"
		}
		if !aligned && hasErr && c.Error == "" {
			c.Message, c.Error = "", c.Message
			if c.Error != "" {
				o.cells["ERROR"] = c.Error
				delete(o.cells, "MESSAGE")
			}
		}
	}
	cs.Conditions = []corev1.ComponentCondition{c}
	t.k.ComponentStatuses = append(t.k.ComponentStatuses, model.ComponentStatus{ComponentStatus: cs, Source: o.src})
}

// addIngress: HOSTS become rules (a rule without a host for "*"; hosts
// kubectl elides are not kept), ADDRESS the load balancer status, and
// "80, 443" in PORTS a TLS section whose hosts are unknown.
func (t *tableReader) addIngress(o rowObject) {
	var ing networkingv1.Ingress
	ing.TypeMeta, ing.ObjectMeta = o.meta("Ingress", "networking.k8s.io/v1")
	if c, ok := o.cells["CLASS"]; ok && c != "<none>" {
		ing.Spec.IngressClassName = &c
	}
	hosts := o.cells["HOSTS"]
	if m := moreRe.FindStringSubmatch(hosts); m != nil {
		hosts = m[1]
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "*" {
			h = ""
		}
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	for _, a := range cellList(o.cells["ADDRESS"]) {
		switch {
		case isIPCell(a):
			ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		case !strings.HasSuffix(a, "..."):
			ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	for _, p := range strings.Split(o.cells["PORTS"], ", ") {
		if p == "443" {
			ing.Spec.TLS = []networkingv1.IngressTLS{{}}
		}
	}
	t.k.Ingresses = append(t.k.Ingresses, model.Ingress{Ingress: ing, Source: o.src})
}

// addEndpoints: kubectl lists up to three address:port pairs, port by
// port, then "+ N more...". Each run of one port becomes a subset holding
// the addresses shown with it; the N elided pairs are added to the last
// subset as addresses without an IP, so that the pairs add up.
func (t *tableReader) addEndpoints(o rowObject) error {
	var ep corev1.Endpoints
	ep.TypeMeta, ep.ObjectMeta = o.meta("Endpoints", "v1")
	cell := o.cells["ENDPOINTS"]
	more := 0
	if m := moreRe.FindStringSubmatch(cell); m != nil {
		cell = m[1]
		more, _ = strconv.Atoi(m[2])
	}
	var err error
	if t.unknownAddrs+more > maxTableAddresses {
		err = fmt.Errorf("%w: ENDPOINTS %q: more than %d elided addresses in one input", ErrValue, o.cells["ENDPOINTS"], maxTableAddresses)
		more = 0
	}
	t.unknownAddrs += more
	// kubectl prints, subset by subset, each port with all its addresses:
	// a new port, or an address seen again with the same port (53/UDP then
	// 53/TCP), starts a new run.
	curPort, seen := -1, map[string]bool{}
	for _, e := range cellList(cell) {
		ip, port := e, 0
		if ap, perr := netip.ParseAddrPort(e); perr == nil {
			ip, port = ap.Addr().String(), int(ap.Port())
		}
		if port != curPort || seen[ip] {
			curPort, seen = port, map[string]bool{}
			var s corev1.EndpointSubset
			if port != 0 {
				s.Ports = []corev1.EndpointPort{{Port: int32(port)}}
			}
			ep.Subsets = append(ep.Subsets, s)
		}
		seen[ip] = true
		last := &ep.Subsets[len(ep.Subsets)-1]
		last.Addresses = append(last.Addresses, corev1.EndpointAddress{IP: ip})
	}
	if more > 0 && len(ep.Subsets) > 0 {
		last := &ep.Subsets[len(ep.Subsets)-1]
		last.Addresses = append(last.Addresses, make([]corev1.EndpointAddress, more)...)
	}
	t.k.Endpoints = append(t.k.Endpoints, model.Endpoints{Endpoints: ep, Source: o.src})
	return err
}

// addEndpointsCount records the length jq printed for the Endpoints the
// command named: that many addresses whose IPs are unknown.
func (t *tableReader) addEndpointsCount(n, line int) {
	var ep corev1.Endpoints
	ep.Kind, ep.APIVersion = "Endpoints", "v1"
	ep.Name, ep.Namespace = t.cmd.names[0], t.cmd.namespace
	s := corev1.EndpointSubset{}
	if t.cmd.countOf == "notReadyAddresses" {
		s.NotReadyAddresses = make([]corev1.EndpointAddress, n)
	} else {
		s.Addresses = make([]corev1.EndpointAddress, n)
	}
	if n > 0 {
		ep.Subsets = []corev1.EndpointSubset{s}
	}
	t.counts["Endpoints"]++
	t.k.Endpoints = append(t.k.Endpoints, model.Endpoints{Endpoints: ep, Source: model.Source{
		Pos:       model.Pos{File: t.name, Line: line, Object: model.ObjectName("Endpoints", ep.Namespace, ep.Name)},
		Node:      t.node,
		FromTable: true,
		Cells:     map[string]string{strings.ToUpper(t.cmd.countOf): strconv.Itoa(n)},
	}})
}

// sniffKubeTable scores kubectl get tables: a header or a kubectl get
// command line of a kind read here and rows that fit, or rows without a
// header whose cells have the shapes of one of those kinds.
func sniffKubeTable(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	var errs model.ErrorList
	t := newTableReader("", "", "", &errs)
	t.dry = true
	for i, line := range text.HeadLines(head, 100) {
		t.line(line, i+1, func(string, ...any) {})
	}
	matched, total := t.headers+t.rows, t.headers+t.rows+t.bad
	if matched == 0 {
		return 0
	}
	score := text.RatioScore(matched, total, 85)
	if score > 0 && (t.headers > 0 || t.cmds > 0) {
		score = 95
	}
	return score
}
