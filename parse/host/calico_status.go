package host

import (
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// CalicoStatusFormat reads `calicoctl node status`: the BGP sessions of
// Calico's BIRD on a node.
var CalicoStatusFormat = &format.Format{
	Name:    "calicoctl-status",
	Kind:    model.KindRoutes,
	Command: "calicoctl node status (or kubectl calico node status), on the node",
	Doc: "one record per row of the IPv4 and IPv6 BGP status tables: the peer's address, its type (node-to-node " +
		"mesh, global, node specific), BIRD's state (up, start), since when, and its info (Established, `Active " +
		"Socket: Connection refused`), a cell's wrapped lines joined; `Calico process is running.` and `No IPv6 " +
		"peers found.` are passed over",
	Sniff: sniffCalicoStatus,
	Parse: format.Records(readCalicoStatus, func(s *model.Snapshot, out []model.BGPPeer) {
		s.BGPPeers = append(s.BGPPeers, out...)
	}, "peers"),
}

// CalicoStatus parses `calicoctl node status`. A line of no such output
// is reported with its position and the rest is read. name is used only
// in positions.
func CalicoStatus(r io.Reader, name string) ([]model.BGPPeer, error) {
	return format.ReadAll(r, name, readCalicoStatus)
}

// calicoStatusNote reports whether t is one of calicoctl's lines around
// its tables.
func calicoStatusNote(t string) bool {
	switch {
	case strings.HasPrefix(t, "Calico process is"), strings.HasSuffix(t, " BGP status"),
		strings.HasPrefix(t, "No IPv") && strings.HasSuffix(t, " peers found."),
		strings.Trim(t, "+-") == "" && strings.Contains(t, "--"):
		return true
	}
	return false
}

// calicoStatusCells splits a table row, "| 10.0.0.11 | node-to-node mesh
// | start | 16:57:43 | Active Socket: Connection |", into its five cells.
func calicoStatusCells(t string) ([]string, bool) {
	if !strings.HasPrefix(t, "|") || !strings.HasSuffix(t, "|") || len(t) < 2 {
		return nil, false
	}
	cells := strings.Split(t[1:len(t)-1], "|")
	if len(cells) != 5 {
		return nil, false
	}
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells, true
}

func readCalicoStatus(r io.Reader, src *format.File, errs *model.ErrorList) []model.BGPPeer {
	var out []model.BGPPeer
	family := "IPv4"
	last := -1 // the row a wrapped line continues, -1 after a border
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { last = -1 }}, func(l *text.Line) {
		t := l.Trimmed
		if strings.HasSuffix(t, " BGP status") {
			family, _, _ = strings.Cut(t, " ")
		}
		if calicoStatusNote(t) {
			if strings.HasPrefix(t, "+") {
				last = -1
			}
			return
		}
		cells, ok := calicoStatusCells(t)
		if !ok {
			l.Syntax(fmt.Errorf("expected a row of calicoctl node status (\"| 10.0.0.11 | node-to-node mesh | up | "+
				"16:57:43 | Established |\"), got %q", t))
			return
		}
		if cells[0] == "PEER ADDRESS" {
			return
		}
		if cells[0] == "" {
			if last < 0 {
				l.Syntax(fmt.Errorf("expected a peer's address in the row's first cell, got %q", t))
				return
			}
			// A cell's text calicoctl wrapped onto the row below.
			p := &out[last]
			for i, f := range []*string{nil, &p.Type, &p.State, &p.Since, &p.Info} {
				if f != nil && cells[i] != "" {
					*f = strings.TrimSpace(*f + " " + cells[i])
				}
			}
			return
		}
		addr, err := netip.ParseAddr(cells[0])
		if err != nil {
			l.Syntax(fmt.Errorf("expected a peer's address, got %q", cells[0]))
			last = -1
			return
		}
		out = append(out, model.BGPPeer{Node: l.Node, Family: family, Peer: addr, Type: cells[1], State: cells[2],
			Since: cells[3], Info: cells[4], Pos: l.Pos()})
		last = len(out) - 1
	})
	return out
}

func sniffCalicoStatus(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	status, header := false, false
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Calico process is") || t == "IPv4 BGP status" || t == "IPv6 BGP status":
			status = true
		case strings.HasPrefix(t, "|") && strings.Contains(t, "PEER ADDRESS") && strings.Contains(t, "PEER TYPE") &&
			strings.Contains(t, "INFO"):
			header = true
		}
	}
	switch {
	case status && header:
		return 95
	case header:
		return 90 // the table pasted without calicoctl's lines around it
	}
	return 0
}
