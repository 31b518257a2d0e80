package flows

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// Formats are the output formats of a Table.
var Formats = []string{"table", "json", "csv"}

// Write writes t in format (one of Formats). Times outside the years
// 0-9999 are written with the year clamped (see OutOfRange). In the table
// and CSV forms, the control characters and other non-printing runes of
// node and file names are escaped (`\n`, `\x1b`, `\u202e`; see package
// escape); JSON keeps the exact names.
func (t *Table) Write(w io.Writer, format string) error {
	if t == nil || w == nil {
		return errors.New("flows: nil table or writer")
	}
	switch format {
	case "table":
		return t.writeTable(w)
	case "json":
		return t.clamped().writeJSON(w)
	case "csv":
		return t.writeCSV(w)
	}
	return fmt.Errorf("unknown format %q", format)
}

// columns of the connection table, shared by the table and CSV forms.
var columns = []string{"where", "start", "client", "server", "outcome", "state", "history", "syn", "synack", "rst", "syn_retx", "synack_ms", "packets", "bytes_out", "bytes_in"}

func (t *Table) row(a *model.Attempt) []string {
	rtt := ""
	if d, ok := a.TimeToSYNACK(); ok {
		rtt = millis(d)
	}
	return []string{
		where(a.Node, a.Pos),
		string(new(microCache).appendStart(nil, a.Start)),
		a.Client.String(),
		a.Server.String(),
		string(a.Outcome),
		a.ConnState,
		a.History,
		segRefs(a, a.SYN),
		segRefs(a, a.SYNACK),
		segRefs(a, append(append([]model.Seg{}, a.ClientRST...), a.ServerRST...)),
		strconv.Itoa(a.SYNRetransmissions()),
		rtt,
		strconv.Itoa(a.Packets),
		strconv.FormatInt(a.ClientBytes, 10),
		strconv.FormatInt(a.ServerBytes, 10),
	}
}

// where is the first cell of the row of an attempt on node at p: its
// position, after its node.
func where(node string, p model.Pos) string {
	where := p.String()
	if node != "" {
		where = node + " " + where
	}
	return escape.String(where)
}

func millis(d time.Duration) string { return string(appendMillis(nil, d)) }

// appendMillis appends d in milliseconds with three decimals (whole
// microseconds), as strconv.AppendFloat(b, float64(d.Microseconds())/1000,
// 'f', 3, 64) writes it, without its float formatting, a fifth of the
// instructions of a CSV row.
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us >= 1<<41 || us <= -1<<41 {
		// 25 days or more: the float's quotient may no longer round
		// back to the microsecond, and it is written as it rounds.
		return strconv.AppendFloat(b, float64(us)/1000, 'f', 3, 64)
	}
	if us < 0 {
		b, us = append(b, '-'), -us
	}
	b = appendInt(b, us/1000)
	f := us % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// segRefs lists the frames (or lines, for text captures) of segs.
func segRefs(a *model.Attempt, segs []model.Seg) string {
	const max = 4
	s := ""
	for i, g := range segs {
		if i == max {
			s += fmt.Sprintf(" +%d", len(segs)-max)
			break
		}
		if i > 0 {
			s += " "
		}
		if g.Frame > 0 {
			s += "#" + strconv.Itoa(g.Frame)
		} else {
			s += "L" + strconv.Itoa(g.Line)
		}
	}
	return s
}

func (t *Table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(columns); err != nil {
		return err
	}
	for i := range t.Attempts {
		row := t.row(&t.Attempts[i])
		for j, cell := range row {
			row[j] = inertCell(cell)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// inertCell keeps a spreadsheet from reading a cell as a formula: a cell
// that starts with =, +, -, @, a tab or a carriage return (a file name
// from the bundle can) gets a leading apostrophe, unless it is a number
// or a lone sign.
func inertCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || s == "-" || s == "+" {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
}

func (t *Table) writeTable(w io.Writer) error {
	if done, err := t.writeTableStart(w, len(t.Attempts)); done || err != nil {
		return err
	}
	pt := &plainTable{header: columns, rows: func(yield func([]string) bool) {
		for i := range t.Attempts {
			if !yield(t.row(&t.Attempts[i])) {
				return
			}
		}
	}}
	if widths, ok := pt.widths(); ok {
		return pt.write(w, widths)
	}
	at := newTable(w)
	at.Header(anyRow(columns)...)
	for i := range t.Attempts {
		if err := at.Append(t.row(&t.Attempts[i])); err != nil {
			return err
		}
	}
	return at.Render()
}

// writeTableStart writes the table form of t, whose attempts selected
// are n, up to the table of the attempts, and reports whether it wrote
// it all: when none is selected.
func (t *Table) writeTableStart(w io.Writer, n int) (bool, error) {
	if _, err := fmt.Fprintf(w, "%s\n\n", t.summaryLine()); err != nil {
		return true, err
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "No connection attempts match.")
		return true, err
	}
	et := newTable(w)
	et.Header(anyRow(endpointColumns)...)
	for _, row := range t.endpointRows() {
		if err := et.Append(row); err != nil {
			return true, err
		}
	}
	if err := et.Render(); err != nil {
		return true, err
	}
	_, err := fmt.Fprintln(w)
	return false, err
}

func anyRow(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// endpointColumns are the columns of the summary per server endpoint.
var endpointColumns = []string{"SERVER", "ATTEMPTS", "CLIENTS", "ESTABLISHED", "REFUSED", "UNANSWERED", "RESET", "SYN RETX", "MEDIAN SYN/ACK MS"}

// endpointRows are the rows of the summary per server endpoint.
func (t *Table) endpointRows() [][]string {
	var rows [][]string
	for _, e := range t.Endpoints {
		server := e.Server.String()
		if e.Node != "" {
			server = escape.String(e.Node) + " " + server
		}
		med := ""
		if e.SYNACKTimed > 0 {
			med = millis(e.MedianSYNACK)
		}
		rows = append(rows, []string{server, strconv.Itoa(e.Attempts), strconv.Itoa(e.Clients), strconv.Itoa(e.Established),
			strconv.Itoa(e.Refused), strconv.Itoa(e.Unanswered), strconv.Itoa(e.Reset), strconv.Itoa(e.SYNRetx), med})
	}
	return rows
}

// summaryLine is the first line of the table form: the counts of the
// captures.
func (t *Table) summaryLine() string {
	s := t.Summary
	retx := fmt.Sprintf("%d SYN retransmissions", s.SYNRetx)
	copies := t.synCopies
	if copies == 0 {
		for i := range t.Attempts {
			copies += t.Attempts[i].SYNCopies()
		}
	}
	if copies > 0 {
		// tshark counts a SYN seen on two interfaces (tcpdump -i any on a
		// bridge) twice; the attempts do not. What tells a copy is its
		// time alone (model.IsSegmentCopy): a stack that sends one SYN
		// twice within it makes copies too.
		retx = fmt.Sprintf("%d SYN retransmissions as tshark counts them, %d of them copies, sent or seen within %s of the SYN before",
			s.SYNRetx, copies, model.MinSYNRetransmission)
	}
	captures := "captures"
	if len(t.Captures) == 1 {
		captures = "capture"
	}
	return fmt.Sprintf("%d %s, %d packets, %d TCP streams: %d established, %d refused, %d unanswered, %d SYN/ACK reset by the client; %s, %d ICMP unreachable, %d ICMP redirects, %d ICMPv6 unreachable, %d ICMPv6 redirects, %d ARP (%d gratuitous)",
		len(t.Captures), captures, s.Packets, s.TCPStreams, s.Established, s.Refused, s.Unanswered, s.SYNACKClientRST,
		retx, s.ICMPUnreach, s.ICMPRedirect, s.ICMP6Unreach, s.ICMP6Redirect, s.ARP, s.ARPGratuitous)
}
