package kube

import (
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// KubectlTableFormat reads the text tables of `kubectl get`.
var KubectlTableFormat = &format.Format{
	Name: "kubectl-table",
	Kind: model.KindKube,
	Command: "kubectl get svc|pods|nodes|cs|ingress|endpoints, with -A, -o wide, --no-headers, rows " +
		"cut out with grep; kubectl get endpoints NAME -o json | jq '.subsets[0].addresses' | jq " +
		"length",
	Doc: "columns by the header's positions, or by the cells' shapes when pasting collapsed the " +
		"spaces; without a header the kind comes from the pasted command line or the cells; " +
		"NAMESPACE from the column or `-n`, else unknown. Objects are partial (`FromTable`, every" +
		" cell kept as printed in `Source.Cells`): PORT(S) give ports and NodePorts, EXTERNAL-IP " +
		"the load balancer ingress, a Pod's RESTARTS total goes to its first container, READY to " +
		"the containers' readiness, a Node's VERSION to `nodeInfo.kubeletVersion`, ROLES to " +
		"`node-role.kubernetes.io/` labels, elided endpoints (`+ 3 more...`) and a `jq length` " +
		"count to addresses without an IP",
	Sniff: sniffKubeTable,
	Parse: objects(readTable),
}

// readTable reads kubectl get tables, counting the objects of each kind in
// the source's details.
func readTable(r io.Reader, src *format.File, errs *model.ErrorList) *model.Kube {
	t := newTableReader(src.Name, src.Node, src.Command, errs)
	t.read(r)
	for kind, n := range t.counts {
		src.Count(kind, n)
	}
	return t.k
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
	k := readTable(r, &format.File{Name: name}, &errs)
	return k, errs.Err()
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
				errorf("%w: %d endpoint addresses: more than %d in one input", format.ErrValue, v, maxTableAddresses)
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
			errorf("%w: expected a row of the %s table (%s)", format.ErrSyntax, tableKindNames[t.hdr.kind], strings.Join(t.hdr.cols, ", "))
		} else {
			errorf("%w: expected a kubectl get table: a header (NAME ...) or a row of services, pods, nodes, componentstatuses, ingresses or endpoints", format.ErrSyntax)
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
	if !t.hasCmd || t.cmd.kind == tkUnknown {
		out = append(out, headerlessCS())
	}
	return out
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
