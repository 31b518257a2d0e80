// Package host reads what a node's own commands print about its network:
// sysctls, socket tables (ss, netstat), interface addresses, routes and
// neighbors (ip, arp, and ip's JSON), container listings, connect loops run
// by hand, and deployment settings. Each file holds one format: its
// Format, its sniffer and its parser; the socket tables, read by one
// reader, share sockets.go.
package host

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Socket tables: ss and netstat listings, ss -s summaries, and the counts
// people make of their columns (ss -tan | awk '{print $4}' | sort | uniq -c).
// Both formats share one reader: a pasted session often mixes them, and each
// row says by its shape which tool printed it.

func parseSocketTables(_ context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
	var errs model.ErrorList
	sr := readSockets(r, src.Name, src.Node, src.Command, &errs)
	snap.Sockets = append(snap.Sockets, sr.sockets...)
	snap.SockCounts = append(snap.SockCounts, sr.counts...)
	src.Count("sockets", len(sr.sockets))
	if len(sr.counts) > 0 {
		src.Count("socket counts", len(sr.counts))
	}
	for k, n := range sr.skipped {
		src.Count(k, n)
	}
	return len(sr.sockets) + len(sr.counts), errs.Err()
}

// Sockets parses socket tables as ss and netstat print them, and counts of
// their columns, from one file that may hold several commands' outputs:
//
//   - ss rows with or without the Netid and State columns (-tan, -lntup,
//     -uanp, "ss -tan state time-wait", -H), processes in the old
//     users:(("nginx",1234,6)) and the new users:(("nginx",pid=1234,fd=6))
//     forms, %iface suffixes, [::1]:80, ::ffff:1.2.3.4 and *:* addresses,
//     timer:(...) and the -e fields on the row, and the -i/-m continuation
//     lines (attached to the socket above as Info; never an error);
//   - netstat rows (-lntup, -tan, -anp, -neopa: User, Inode, PID/Program and
//     Timer columns; the empty State of UDP rows is read as UNCONN); the
//     UNIX, Bluetooth and other non-Internet sections, and netstat -g's
//     multicast group memberships, are skipped, and so
//     are unix, netlink and packet rows of ss;
//   - ss -s summaries, and "N VALUE" lines counted with sort | uniq -c,
//     whose meaning (state, local or peer address, and the state a grep
//     kept) is read from the command of the prompt above them.
//
// States are given in ss spelling (netstat's ESTABLISHED reads ESTAB,
// TIME_WAIT reads TIME-WAIT). IPv4-mapped IPv6 addresses are read as the
// IPv4 address, as netstat prints them, and a bare "*" address as the
// unspecified address ("::" from ss, which prints it for dual-stack
// sockets). Shell prompts name the node of the rows below them
// ("root@node3:~# netstat -lntup"), and so do node markers ("=== node3 ===").
// A row without a Netid or Proto column takes its protocol from the command
// of the prompt above it (-t, -u), or else from its section's states: UDP
// when they are UNCONN and no TCP-only state, TCP otherwise.
//
// A line that is none of these is reported with its position and the rest
// is read. name is used only in positions.
func Sockets(r io.Reader, name string) ([]model.Socket, []model.SocketCount, error) {
	var errs model.ErrorList
	sr := readSockets(r, name, "", "", &errs)
	return sr.sockets, sr.counts, errs.Err()
}

// sockCmd is what a command line says about the table below it.
type sockCmd struct {
	tool     string // "ss" or "netstat"; "" when unknown
	proto    string // the one protocol the command lists (tcp, udp, raw, sctp ...); "" for several or unknown
	netid    bool   // ss prints a Netid column (several protocols)
	noState  bool   // ss prints no State column (a single "state X" filter)
	skip     bool   // the command lists only unix, packet or netlink sockets
	wide     bool   // netstat -W / -T: addresses are not cut to 23 columns
	count    bool   // the pipeline ends in uniq -c: "N VALUE" lines
	column   string // the counted column: "state", "local", "peer"; "" when unknown
	state    string // the one state the command or its greps keep (ss spelling)
	ambState bool   // several states are named: state stays ""
}

type sockReader struct {
	l       *text.Lines
	node    string
	cmd     sockCmd
	sockets []model.Socket
	counts  []model.SocketCount
	skipped map[string]int

	cur         int   // index of the last socket read, for continuation lines; -1 when none
	pending     []int // sockets of this section whose protocol is not known yet
	sawUnconn   bool
	sawTCPState bool
	otherSect   bool // inside netstat's UNIX (or other non-Internet) section
}

func readSockets(r io.Reader, name, node, command string, errs *model.ErrorList) *sockReader {
	sr := &sockReader{node: node, cur: -1, skipped: map[string]int{}}
	if c, ok := parseSockCmd(command); ok {
		sr.cmd = c
	}
	sr.l = text.NewLines(r, name, errs)
	for sr.l.Next() {
		sr.line(sr.l.Text())
	}
	sr.endSection()
	return sr
}

func (sr *sockReader) skip(why string) { sr.skipped[why]++ }

// endSection settles the protocol of the rows that had none.
func (sr *sockReader) endSection() {
	proto := "tcp"
	if sr.sawUnconn && !sr.sawTCPState {
		proto = "udp"
	}
	for _, i := range sr.pending {
		sr.sockets[i].Proto = proto
	}
	sr.pending, sr.sawUnconn, sr.sawTCPState = nil, false, false
	sr.cur = -1
}

func (sr *sockReader) line(line string) {
	l := sr.l
	t := strings.TrimSpace(line)
	if t == "" {
		return
	}
	if n, ok := text.NodeMarker(line); ok {
		sr.endSection()
		sr.node, sr.otherSect = n, false
		return
	}
	host, cmd, ok := text.Prompt(line)
	if !ok {
		cmd, ok = l.PastedCommand()
	}
	if ok {
		sr.endSection()
		if host != "" {
			sr.node = host
		}
		sr.otherSect = false
		if c, ok := parseSockCmd(cmd); ok {
			sr.cmd = c
		} else if cmd != "" {
			sr.cmd = sockCmd{}
		}
		return
	}
	if sockMessage(t) {
		sr.skip("messages skipped")
		return
	}
	if strings.HasPrefix(t, "Active ") || netstatGroupBanner(t) {
		// netstat section banners: "Active Internet connections (only
		// servers)", "Active UNIX domain sockets (...)", "Active Bluetooth
		// connections", "Active X.25 sockets" ...
		sr.endSection()
		sr.otherSect = !strings.HasPrefix(t, "Active Internet connections")
		if sr.cmd.tool == "" {
			sr.cmd.tool = "netstat"
		}
		return
	}
	if sr.otherSect {
		sr.skip("netstat non-Internet lines skipped")
		return
	}
	f := strings.Fields(t)
	if sockHeader(f) {
		sr.endSection()
		if f[0] == "Proto" {
			sr.cmd.tool = "netstat"
		} else if sr.cmd.tool == "" {
			sr.cmd.tool = "ss"
		}
		return
	}
	if sr.cmd.skip {
		sr.skip("unix sockets skipped")
		return
	}
	// ss -i/-m/-e/-o details continue the row above on lines that start
	// with white space.
	cont := line[0] == ' ' || line[0] == '\t'
	if s, kind, err := sr.row(line, f); kind != rowNone {
		switch {
		case err != nil:
			l.Errorf("%w: %v", format.ErrSyntax, err)
			sr.cur = -1
		case kind == rowSkipped:
			sr.skip("unix, netlink and packet sockets skipped")
			sr.cur = -1
		default:
			sr.add(s)
		}
		return
	}
	if ok, err := sr.summary(f); ok {
		if err != nil {
			l.Errorf("%w: %v", format.ErrSyntax, err)
		}
		return
	}
	if ok, err := sr.countLine(t); ok {
		if err != nil {
			l.Errorf("%w: %v", format.ErrSyntax, err)
		}
		return
	}
	if cont {
		if sr.cur >= 0 {
			sr.attach(&sr.sockets[sr.cur], t)
		} else {
			sr.skip("detail lines without a socket")
		}
		return
	}
	l.Errorf("%w: expected an ss or netstat socket row (\"ESTAB 0 0 10.0.0.1:22 10.0.0.2:50000\", \"tcp 0 0 0.0.0.0:22 0.0.0.0:* LISTEN\") or a count (\"12 TIME-WAIT\")", format.ErrSyntax)
	sr.cur = -1
}

func (sr *sockReader) add(s model.Socket) {
	s.Node = sr.node
	s.Pos = sr.l.Pos()
	switch s.State {
	case "UNCONN":
		sr.sawUnconn = true
	case "ESTAB", "UNKNOWN", "":
	default:
		sr.sawTCPState = true
	}
	sr.sockets = append(sr.sockets, s)
	sr.cur = len(sr.sockets) - 1
	if s.Proto == "" {
		sr.pending = append(sr.pending, sr.cur)
	}
}

// sockMessage reports lines that ss and netstat write to stderr (often
// captured with 2>&1) and netstat's notes: not rows, not errors.
func sockMessage(t string) bool {
	for _, p := range []string{
		"Failed to find cgroup2 mount", "Cannot open netlink socket", "RTNETLINK answers", "Cannot send dump request",
		"ss: ", "netstat: ", "Error: ",
		"(Not all processes could be identified", "will not be shown, you would have to be root",
		"(No info could be read for", "warning, got bogus", "warning, got duplicate",
	} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// sockHeader reports the column headers of ss ("Netid State Recv-Q ...",
// "State Recv-Q Send-Q ...", "Recv-Q Send-Q Local Address:Port ...") and
// netstat ("Proto Recv-Q Send-Q ...", "Proto RefCnt Flags ...").
func sockHeader(f []string) bool {
	if len(f) < 3 {
		return false
	}
	switch f[0] {
	case "Netid", "State":
		return f[1] == "Recv-Q" || f[1] == "State"
	case "Recv-Q":
		return f[1] == "Send-Q"
	case "Proto":
		return f[1] == "Recv-Q" || f[1] == "RefCnt"
	}
	return false
}

type rowKind int

const (
	rowNone    rowKind = iota // not a socket row
	rowSocket                 // a socket (or a row with an error)
	rowSkipped                // a unix, netlink or packet socket
)

// row reads one ss or netstat row. kind is rowNone when the line does not
// have the shape of either.
func (sr *sockReader) row(line string, f []string) (model.Socket, rowKind, error) {
	if len(f) < 4 {
		return model.Socket{}, rowNone, nil
	}
	if netstatProto(f[0]) && isUint(f[1]) && isUint(f[2]) && len(f) >= 5 {
		// "tcp 0 0 local peer ..." is a netstat row, or an ss row with a
		// Netid column and no State column (ss -tuan state established):
		// ss brackets IPv6 addresses and never prints tcp6.
		if sr.cmd.tool != "ss" || strings.HasSuffix(f[0], "6") {
			s, err := sr.netstatRow(line, f)
			return s, rowSocket, err
		}
	}
	if f[0] == "unix" && sr.cmd.tool != "ss" {
		return model.Socket{}, rowSkipped, nil
	}
	return sr.ssRow(line, f)
}

// fieldStarts returns the byte offset of each whitespace-separated field.
func fieldStarts(line string) []int {
	var out []int
	in := false
	for i := 0; i < len(line); i++ {
		sp := line[i] == ' ' || line[i] == '\t'
		if !sp && !in {
			out = append(out, i)
		}
		in = !sp
	}
	return out
}

func isUint(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendNote(notes []string, n string) []string {
	if n == "" {
		return notes
	}
	for _, o := range notes {
		if o == n {
			return notes
		}
	}
	return append(notes, n)
}

// extras reads what ss prints after the addresses: users:((...)),
// timer:(...), and -e/-m/-i fields (uid:0 ino:12345 sk:1 <->, skmem:(...)),
// which are kept in Info.
func (sr *sockReader) extras(s *model.Socket, rest string) error {
	for _, tok := range ssTokens(rest) {
		switch {
		case strings.HasPrefix(tok, "users:("):
			users, err := parseSSUsers(tok)
			if err != nil {
				return err
			}
			s.Users = append(s.Users, users...)
			if s.Process == "" && len(s.Users) > 0 {
				s.Process, s.PID = s.Users[0].Name, s.Users[0].PID
				// the kernel's comm is 15 characters at most
				s.ProcessTruncated = len(s.Process) >= 15
			}
		case strings.HasPrefix(tok, "timer:("):
			s.Timer = strings.TrimSuffix(strings.TrimPrefix(tok, "timer:("), ")")
		default:
			if s.Info == "" {
				s.Info = tok
			} else {
				s.Info += " " + tok
			}
		}
	}
	return nil
}

// attach adds a continuation line to s.
func (sr *sockReader) attach(s *model.Socket, t string) {
	_ = sr.extras(s, t)
}

// parseSockAddr reads an address column of ss or netstat:
// "10.0.0.1:22", "[fd00::1]:443", "[fe80::1]%eth0:546", "0.0.0.0%eth0:68",
// "*:*", "[::ffff:10.0.0.1]:80", ":::22" and "::1:25" (old ss, netstat),
// "127.0.0.1:ssh" (a service name without -n: port 0 and a note). A bare
// "*" host is the unspecified address: "::" when star6, else 0.0.0.0.
func parseSockAddr(s string, star6 bool, tool string) (ap netip.AddrPort, iface, note string, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return ap, "", "", fmt.Errorf("%q: expected ADDRESS:PORT", s)
	}
	host, portS := s[:i], s[i+1:]
	var port uint16
	switch {
	case portS == "*":
	case isUint(portS):
		p, perr := strconv.ParseUint(portS, 10, 16)
		if perr != nil {
			return ap, "", "", fmt.Errorf("%q: port out of range", s)
		}
		port = uint16(p)
	case serviceName(portS):
		note = "port printed as a service name (" + tool + " without -n): read as 0"
	default:
		return ap, "", "", fmt.Errorf("%q: expected ADDRESS:PORT", s)
	}
	if strings.HasPrefix(host, "[") {
		k := strings.IndexByte(host, ']')
		if k < 0 {
			return ap, "", "", fmt.Errorf("%q: unterminated [address]", s)
		}
		after := host[k+1:]
		host = host[1:k]
		if after != "" {
			if after[0] != '%' {
				return ap, "", "", fmt.Errorf("%q: expected [ADDRESS]%%IFACE:PORT", s)
			}
			iface = after[1:]
		}
	}
	if j := strings.IndexByte(host, '%'); j >= 0 { // 10.0.0.1%eth0, fe80::1%eth0
		if iface == "" {
			iface = host[j+1:]
		}
		host = host[:j]
	}
	var addr netip.Addr
	switch {
	case host == "*":
		addr = netip.IPv4Unspecified()
		if star6 {
			addr = netip.IPv6Unspecified()
		}
	default:
		a, aerr := netip.ParseAddr(host)
		if aerr != nil {
			if !hostName(host) {
				return ap, "", "", fmt.Errorf("%q: %q is not an IP address", s, host)
			}
			n := "host printed as a name (" + tool + " without -n): address unknown"
			if note != "" {
				note += "; " + n
			} else {
				note = n
			}
		} else {
			addr = a.Unmap()
		}
	}
	return netip.AddrPortFrom(addr, port), iface, note, nil
}

// serviceName reports whether s can be a service name from /etc/services.
func serviceName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '+', c == '/':
		default:
			return false
		}
	}
	return letter
}

// hostName reports whether s can be a host name printed instead of an
// address.
func hostName(s string) bool {
	return serviceName(s) && !strings.Contains(s, "/")
}

// sockStateName returns the ss spelling of a state printed by ss or
// netstat, "" when s is not one.
func sockStateName(s string) string {
	if ssStates[s] {
		return s
	}
	return netstatStates[s]
}

// sniffSockets scores lines of ss (tool "ss") or netstat output.
func sniffSockets(head []byte, tool string) int {
	if !text.IsText(head) {
		return 0
	}
	sr := &sockReader{cur: -1, skipped: map[string]int{}, l: text.NewLines(strings.NewReader(""), "", &model.ErrorList{})}
	matched, total, strong := 0, 0, false
	groups := false // inside netstat -g's group memberships
	for i, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if groups && !strings.HasPrefix(t, "Active ") {
			if _, _, ok := text.Prompt(line); !ok {
				continue
			}
		}
		groups = false
		cmd, ok := text.HeadCommand(i, line)
		if ok {
			if c, ok := parseSockCmd(cmd); ok {
				sr.cmd = c
				if c.tool == tool {
					matched += 3
				}
			} else if cmd != "" {
				sr.cmd = sockCmd{}
			}
			continue
		}
		if sockMessage(t) {
			continue
		}
		f := strings.Fields(t)
		if ok, err := sr.countLine(t); ok {
			// counts belong to the tool their prompt names; bare counts
			// to ss when they count states
			total++
			if err == nil && (sr.cmd.tool == tool || tool == "ss" && sr.cmd.tool == "" && sockStateName(f[len(f)-1]) != "") {
				matched++
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // continuation lines, or indented text
		}
		total++
		switch {
		case strings.HasPrefix(t, "Active Internet connections"), strings.HasPrefix(t, "Active UNIX domain sockets"), netstatGroupBanner(t):
			groups = netstatGroupBanner(t)
			if tool == "netstat" {
				matched, strong = matched+1, true
			}
			continue
		case sockHeader(f):
			if (f[0] == "Proto") == (tool == "netstat") {
				matched, strong = matched+1, true
			}
			continue
		}
		if _, kind, _ := sr.row(line, f); kind != rowNone {
			isNetstat := netstatProto(f[0]) && isUint(f[1]) || f[0] == "unix"
			if isNetstat == (tool == "netstat") {
				matched++
			}
			continue
		}
		if ok, err := sr.summary(f); ok && err == nil && tool == "ss" {
			matched++
		}
	}
	score := min(text.RatioScore(matched, total, 90), 90)
	if strong && score > 0 {
		score = max(score, 95)
	}
	return score
}
