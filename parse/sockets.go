package parse

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Socket tables: ss and netstat listings, ss -s summaries, and the counts
// people make of their columns (ss -tan | awk '{print $4}' | sort | uniq -c).
// Both formats share one reader: a pasted session often mixes them, and each
// row says by its shape which tool printed it.

var ssFormat = &Format{
	Name:    "ss",
	Kind:    model.KindSockets,
	Command: "ss -tanp, ss -lntup, ss -uanp, ss -tan state time-wait, ss -tanoeim, ss -s, and their columns counted with sort | uniq -c",
	Sniff:   sniffSS,
	Parse:   parseSocketTables,
}

var netstatFormat = &Format{
	Name:    "netstat",
	Kind:    model.KindSockets,
	Command: "netstat -lntup, netstat -tan, netstat -anp, netstat -neopa, and their columns counted with sort | uniq -c",
	Sniff:   sniffNetstat,
	Parse:   parseSocketTables,
}

func parseSocketTables(_ context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
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
	if host, cmd, ok := text.Prompt(line); ok {
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
			l.Errorf("%w: %v", ErrSyntax, err)
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
			l.Errorf("%w: %v", ErrSyntax, err)
		}
		return
	}
	if ok, err := sr.countLine(t); ok {
		if err != nil {
			l.Errorf("%w: %v", ErrSyntax, err)
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
	l.Errorf("%w: expected an ss or netstat socket row (\"ESTAB 0 0 10.0.0.1:22 10.0.0.2:50000\", \"tcp 0 0 0.0.0.0:22 0.0.0.0:* LISTEN\") or a count (\"12 TIME-WAIT\")", ErrSyntax)
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

// ssNetids are the Netid column values of ss; ssSkippedNetids are those of
// sockets that have no IP addresses.
var (
	ssNetids        = map[string]bool{"tcp": true, "udp": true, "raw": true, "sctp": true, "dccp": true, "mptcp": true, "icmp6": true}
	ssSkippedNetids = map[string]bool{
		"u_str": true, "u_dgr": true, "u_seq": true, "nl": true, "p_raw": true, "p_dgr": true,
		"v_str": true, "v_dgr": true, "tipc": true, "xdp": true, "???": true,
	}
)

// ssStates are the states ss prints.
var ssStates = map[string]bool{
	"UNKNOWN": true, "ESTAB": true, "SYN-SENT": true, "SYN-RECV": true, "FIN-WAIT-1": true,
	"FIN-WAIT-2": true, "TIME-WAIT": true, "UNCONN": true, "CLOSE-WAIT": true, "LAST-ACK": true,
	"LISTEN": true, "CLOSING": true, "NEW-SYN-RECV": true, "BOUND": true, "CONNECTED": true,
}

// netstatStates maps netstat's state names to ss spelling.
var netstatStates = map[string]string{
	"ESTABLISHED": "ESTAB", "SYN_SENT": "SYN-SENT", "SYN_RECV": "SYN-RECV", "FIN_WAIT1": "FIN-WAIT-1",
	"FIN_WAIT2": "FIN-WAIT-2", "TIME_WAIT": "TIME-WAIT", "CLOSE": "UNCONN", "CLOSE_WAIT": "CLOSE-WAIT",
	"LAST_ACK": "LAST-ACK", "LISTEN": "LISTEN", "CLOSING": "CLOSING", "UNKNOWN": "UNKNOWN",
}

// kernelStates maps the kernel's TCP state numbers (netstat prints raw
// sockets' states as numbers) to ss spelling.
var kernelStates = map[string]string{
	"1": "ESTAB", "2": "SYN-SENT", "3": "SYN-RECV", "4": "FIN-WAIT-1", "5": "FIN-WAIT-2", "6": "TIME-WAIT",
	"7": "UNCONN", "8": "CLOSE-WAIT", "9": "LAST-ACK", "10": "LISTEN", "11": "CLOSING", "12": "NEW-SYN-RECV",
}

func netstatProto(s string) bool {
	switch s {
	case "tcp", "tcp6", "udp", "udp6", "udpl", "udpl6", "raw", "raw6", "sctp", "sctp6":
		return true
	}
	return false
}

// ssRow reads "[Netid] [State] Recv-Q Send-Q Local Peer [extras]".
func (sr *sockReader) ssRow(line string, f []string) (model.Socket, rowKind, error) {
	var s model.Socket
	i := 0
	if ssSkippedNetids[f[0]] {
		return s, rowSkipped, nil
	}
	if ssNetids[f[0]] {
		s.Proto = f[0]
		i++
	}
	if i < len(f) && ssStates[f[i]] {
		s.State = f[i]
		i++
	}
	if len(f) < i+4 || !isUint(f[i]) || !isUint(f[i+1]) {
		return s, rowNone, nil
	}
	if !strings.Contains(f[i+2], ":") {
		// ss -x rows: "path inode peer inode" (or "* inode")
		if i > 0 && len(f) >= i+5 && isUint(f[i+3]) {
			return s, rowSkipped, nil
		}
		if i == 0 {
			return s, rowNone, nil
		}
	}
	s.RecvQ, _ = strconv.Atoi(f[i])
	s.SendQ, _ = strconv.Atoi(f[i+1])
	if s.Proto == "" {
		s.Proto = sr.cmd.proto
	}
	if s.State == "" && sr.cmd.noState {
		s.State = sr.cmd.state
	}
	var notes []string
	local, iface, note, err := parseSockAddr(f[i+2], true, "ss")
	if err != nil {
		return s, rowSocket, fmt.Errorf("local address: %v", err)
	}
	s.Local, s.Iface = local, iface
	notes = appendNote(notes, note)
	peer, _, note, err := parseSockAddr(f[i+3], true, "ss")
	if err != nil {
		return s, rowSocket, fmt.Errorf("peer address: %v", err)
	}
	s.Peer = peer
	notes = appendNote(notes, note)
	s.Note = strings.Join(notes, "; ")
	if starts := fieldStarts(line); len(starts) > i+4 {
		if err := sr.extras(&s, line[starts[i+4]:]); err != nil {
			return s, rowSocket, err
		}
	}
	return s, rowSocket, nil
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

// ssTokens splits the extras of an ss row into space-separated tokens,
// keeping parenthesized groups (with their quoted names) whole.
func ssTokens(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		start, depth, quote := i, 0, false
		for i < len(s) {
			c := s[i]
			if quote {
				if c == '"' {
					quote = false
				}
				i++
				continue
			}
			if c == '"' {
				quote = true
			} else if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if (c == ' ' || c == '\t') && depth == 0 {
				break
			}
			i++
		}
		out = append(out, s[start:i])
	}
	return out
}

// parseSSUsers reads users:(("nginx",pid=1234,fd=6),("nginx",pid=1235,fd=6))
// and the old form users:(("nginx",1234,6)). Entries elided as "..." (by a
// person shortening a long list) are skipped.
func parseSSUsers(tok string) ([]model.SocketUser, error) {
	body := strings.TrimPrefix(tok, "users:(")
	if !strings.HasSuffix(body, ")") {
		return nil, fmt.Errorf("process list %.40q: expected users:((\"name\",pid=N,fd=N))", tok)
	}
	body = body[:len(body)-1]
	var out []model.SocketUser
	for i := 0; i < len(body); {
		switch body[i] {
		case ',', ' ', '.':
			i++
			continue
		case '(':
		default:
			return out, fmt.Errorf("process list %.40q: expected (\"name\",pid=N,fd=N)", tok)
		}
		i++
		if i >= len(body) || body[i] != '"' {
			return out, fmt.Errorf("process list %.40q: expected a quoted name", tok)
		}
		// the name ends at the quote followed by ',' or ')'
		end := -1
		for j := i + 1; j < len(body); j++ {
			if body[j] == '"' && (j+1 == len(body) || body[j+1] == ',' || body[j+1] == ')') {
				end = j
				break
			}
		}
		if end < 0 {
			return out, fmt.Errorf("process list %.40q: unterminated name", tok)
		}
		u := model.SocketUser{Name: body[i+1 : end]}
		close := strings.IndexByte(body[end:], ')')
		if close < 0 {
			return out, fmt.Errorf("process list %.40q: expected ')'", tok)
		}
		fields := strings.Split(strings.Trim(body[end+1:end+close], ","), ",")
		for k, fld := range fields {
			key, val, found := strings.Cut(fld, "=")
			if !found { // old form: ("name",pid,fd)
				key, val = [...]string{"pid", "fd", ""}[min(k, 2)], fld
			}
			n, err := strconv.Atoi(val)
			if err != nil && (key == "pid" || key == "fd") {
				return out, fmt.Errorf("process list %.40q: %s %q is not a number", tok, key, val)
			}
			switch key {
			case "pid":
				u.PID = n
			case "fd":
				u.FD = n
			}
		}
		out = append(out, u)
		i = end + close + 1
	}
	return out, nil
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

// netstatTimerRe matches the first word of netstat -o's Timer column.
var netstatTimerRe = regexp.MustCompile(`^(off|on|keepalive|timewait|probe|unkn-\d+)$`)

// netstatRow reads "Proto Recv-Q Send-Q Local Foreign [State] [User Inode]
// [PID/Program name] [Timer]".
func (sr *sockReader) netstatRow(line string, f []string) (model.Socket, error) {
	s := model.Socket{Proto: f[0]}
	s.RecvQ, _ = strconv.Atoi(f[1])
	s.SendQ, _ = strconv.Atoi(f[2])
	v6 := strings.HasSuffix(f[0], "6")
	var notes []string
	for k, col := range []*netip.AddrPort{&s.Local, &s.Peer} {
		field := f[3+k]
		ap, iface, note, err := parseSockAddr(field, v6, "netstat")
		cut := !sr.cmd.wide && len(field) == 23
		if err != nil && cut {
			// netstat cut the address to fit 23 columns; keep the port
			ap, note, err = netip.AddrPort{}, "address cut short by netstat (23 columns; netstat -W prints it whole)", nil
			if i := strings.LastIndexByte(field, ':'); i >= 0 {
				if p, perr := strconv.ParseUint(field[i+1:], 10, 16); perr == nil {
					ap = netip.AddrPortFrom(netip.Addr{}, uint16(p))
				}
			}
		} else if err == nil && cut && strings.Contains(field[:strings.LastIndexByte(field, ':')], ":") {
			note = appendNoteStr(note, "address may be cut short by netstat (23 columns)")
		}
		if err != nil {
			return s, fmt.Errorf("%s address: %v", [...]string{"local", "foreign"}[k], err)
		}
		*col = ap
		if k == 0 {
			s.Iface = iface
		}
		notes = appendNote(notes, note)
	}
	s.Note = strings.Join(notes, "; ")

	starts := fieldStarts(line)
	rest := f[5:]
	// the columns before PID/Program name or Timer: [State] [User Inode]
	var pre []string
	j := 0
	for ; j < len(rest); j++ {
		if netstatPIDProg(rest[j]) || (netstatTimerRe.MatchString(rest[j]) && j+1 < len(rest) && strings.HasPrefix(rest[j+1], "(")) {
			break
		}
		pre = append(pre, rest[j])
	}
	if len(pre) > 0 {
		if st, ok := netstatStates[pre[0]]; ok {
			s.State, pre = st, pre[1:]
		} else if st, ok := kernelStates[pre[0]]; ok && len(pre)%2 == 1 {
			s.State, pre = st, pre[1:]
		}
	}
	if s.State == "" && strings.HasPrefix(s.Proto, "udp") {
		s.State = "UNCONN"
	}
	switch len(pre) {
	case 0:
	case 2:
		s.Info = "user:" + pre[0] + " ino:" + pre[1]
	default:
		return s, fmt.Errorf("unexpected columns %q after the addresses: expected State, User, Inode, PID/Program name, Timer", strings.Join(pre, " "))
	}
	if j < len(rest) && netstatPIDProg(rest[j]) {
		// the program name may hold spaces ("sshd: /usr/sbin"): it runs
		// to the Timer column or the end of the line
		k := j + 1
		for ; k < len(rest); k++ {
			if netstatTimerRe.MatchString(rest[k]) && k+1 < len(rest) && strings.HasPrefix(rest[k+1], "(") {
				break
			}
		}
		from := starts[5+j]
		to := len(line)
		if 5+k < len(starts) {
			to = starts[5+k]
		}
		prog := strings.TrimRight(line[from:to], " \t")
		if prog != "-" {
			pid, name, _ := strings.Cut(prog, "/")
			s.PID, _ = strconv.Atoi(pid)
			s.Process = name
			// netstat cuts "PID/Program name" to 19 characters
			s.ProcessTruncated = len(prog) >= 19
			s.Users = []model.SocketUser{{Name: name, PID: s.PID}}
		}
		j = k
	}
	if j < len(rest) {
		s.Timer = strings.Join(rest[j:], " ")
	}
	return s, nil
}

func appendNoteStr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// netstatPIDProg matches netstat's "1234/name" and "-".
func netstatPIDProg(s string) bool {
	if s == "-" {
		return true
	}
	pid, _, ok := strings.Cut(s, "/")
	return ok && isUint(pid)
}

// summary reads the lines of ss -s:
//
//	Total: 177 (kernel 1565)
//	TCP:   1193 (estab 5, closed 1178, orphaned 0, synrecv 0, timewait 1178/0), ports 0
//	Transport Total     IP        IPv6
//	RAW	  1         0         1
func (sr *sockReader) summary(f []string) (bool, error) {
	switch {
	case f[0] == "Total:" && len(f) >= 2:
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return true, fmt.Errorf("ss -s total %q: want a number", f[1])
		}
		sr.addCount(model.SocketCount{Count: n})
		return true, nil
	case f[0] == "Transport" && len(f) >= 2 && f[1] == "Total":
		return true, nil
	case f[0] == "TCP:" && len(f) >= 2:
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return true, fmt.Errorf("ss -s TCP total %q: want a number", f[1])
		}
		sr.addCount(model.SocketCount{Proto: "tcp", Count: n})
		rest := strings.Join(f[2:], " ")
		open, close := strings.IndexByte(rest, '('), strings.IndexByte(rest, ')')
		if open < 0 || close < open {
			return true, nil
		}
		for _, part := range strings.Split(rest[open+1:close], ",") {
			kv := strings.Fields(part)
			if len(kv) != 2 {
				return true, fmt.Errorf("ss -s TCP detail %q: expected NAME COUNT", strings.TrimSpace(part))
			}
			v, _, _ := strings.Cut(kv[1], "/") // timewait 1178/0
			n, err := strconv.Atoi(v)
			if err != nil {
				return true, fmt.Errorf("ss -s TCP detail %q: want a number", strings.TrimSpace(part))
			}
			state := map[string]string{"estab": "ESTAB", "closed": "CLOSED", "orphaned": "orphaned", "synrecv": "SYN-RECV", "timewait": "TIME-WAIT"}[kv[0]]
			if state == "" {
				state = kv[0]
			}
			sr.addCount(model.SocketCount{Proto: "tcp", State: state, Count: n})
		}
		return true, nil
	case len(f) == 4 && (f[0] == "*" || f[0] == "RAW" || f[0] == "UDP" || f[0] == "TCP" || f[0] == "INET" || f[0] == "FRAG"):
		proto := strings.ToLower(f[0])
		if proto == "*" {
			proto = ""
		}
		for k, fam := range []string{"", "ipv4", "ipv6"} {
			if f[1+k] == "-" {
				continue
			}
			n, err := strconv.Atoi(f[1+k])
			if err != nil {
				return true, fmt.Errorf("ss -s %s count %q: want a number", f[0], f[1+k])
			}
			sr.addCount(model.SocketCount{Proto: proto, Family: fam, Count: n})
		}
		return true, nil
	}
	return false, nil
}

func (sr *sockReader) addCount(c model.SocketCount) {
	c.Node = sr.node
	c.Pos = sr.l.Pos()
	sr.counts = append(sr.counts, c)
}

// countHeaderWords are the header words that a count of a column picks up
// ("1 State", "1 Foreign", "1 established)" from netstat's banner).
var countHeaderWords = map[string]bool{
	"State": true, "Recv-Q": true, "Send-Q": true, "Local": true, "Peer": true, "Foreign": true,
	"Address": true, "Address:Port": true, "Netid": true, "Proto": true, "Process": true, "PID/Program": true,
	"established)": true, "servers)": true, "Internet": true, "connections": true, "Active": true, "only": true,
	"domain": true, "RefCnt": true, "Flags": true, "Type": true, "I-Node": true, "Path": true, "Timer": true,
	"User": true, "Inode": true, "w/o": true,
}

// countLine reads "N VALUE", a line of ... | sort | uniq -c, where VALUE is
// a state, an address or an address and port. A comment after the value
// ("161 10.10.85.105 # Zabbix") is ignored.
func (sr *sockReader) countLine(t string) (bool, error) {
	if i := strings.Index(t, " #"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	f := strings.Fields(t)
	if len(f) != 2 || !isUint(f[0]) {
		return false, nil
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return true, fmt.Errorf("count %q: want a number", f[0])
	}
	v := f[1]
	c := model.SocketCount{Proto: sr.cmd.proto, State: sr.cmd.state, Count: n}
	if countHeaderWords[v] {
		sr.skip("header words counted")
		return true, nil
	}
	if st := sockStateName(v); st != "" {
		c.State = st
		sr.addCount(c)
		return true, nil
	}
	if isUint(v) || v == "*" {
		sr.skip("counts by port skipped")
		return true, nil
	}
	addr, port, ok := countAddr(v)
	if !ok {
		return true, fmt.Errorf("count of %q: expected a socket state or an address", v)
	}
	c.Port = port
	switch sr.cmd.column {
	case "local":
		c.Local = addr
	case "peer":
		c.Peer = addr
	default:
		c.Addr = addr
	}
	sr.addCount(c)
	return true, nil
}

// countAddr reads a counted address: "10.0.0.1", "[fd00::1]", "fd00::1",
// "10.0.0.1:8080", "[::ffff:10.0.0.2]:443", "0.0.0.0%eth0".
func countAddr(v string) (netip.Addr, uint16, bool) {
	strip := func(h string) string {
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if i := strings.IndexByte(h, '%'); i >= 0 {
			h = h[:i]
		}
		return h
	}
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") || !strings.HasPrefix(v, "[") {
		if a, err := netip.ParseAddr(strip(v)); err == nil {
			return a.Unmap(), 0, true
		}
	}
	ap, _, note, err := parseSockAddr(v, true, "ss")
	if err != nil || note != "" || !ap.Addr().IsValid() {
		return netip.Addr{}, 0, false
	}
	return ap.Addr(), ap.Port(), true
}

// sockStateName returns the ss spelling of a state printed by ss or
// netstat, "" when s is not one.
func sockStateName(s string) string {
	if ssStates[s] {
		return s
	}
	return netstatStates[s]
}

// ssFilterStates maps the state names of ss filters ("state time-wait") to
// the spelling of its State column; groups are "".
var ssFilterStates = map[string]string{
	"established": "ESTAB", "syn-sent": "SYN-SENT", "syn-recv": "SYN-RECV", "fin-wait-1": "FIN-WAIT-1",
	"fin-wait-2": "FIN-WAIT-2", "time-wait": "TIME-WAIT", "closed": "UNCONN", "close-wait": "CLOSE-WAIT",
	"last-ack": "LAST-ACK", "listening": "LISTEN", "listen": "LISTEN", "closing": "CLOSING",
	"all": "", "connected": "", "synchronized": "", "bucket": "", "big": "",
}

// stateWords returns the state names (ss spelling) in a grep pattern or an
// awk program: "TIME-WAIT", "ESTAB|TIME-WAIT", "/TIME_WAIT/",
// "$1==\"LISTEN\"", "-i listen".
func stateWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		if st := stateWord(w); st != "" {
			out = append(out, st)
		}
	}
	return out
}

func stateWord(w string) string {
	u := strings.ToUpper(w)
	if s := sockStateName(u); s != "" {
		return s
	}
	u = strings.ReplaceAll(u, "_", "-")
	if s := sockStateName(u); s != "" {
		return s
	}
	switch u {
	case "FIN-WAIT1":
		return "FIN-WAIT-1"
	case "FIN-WAIT2":
		return "FIN-WAIT-2"
	}
	return ""
}

// awkPrintRe finds the column an awk program prints: {print $4}.
var awkPrintRe = regexp.MustCompile(`print\s*\(?\s*\$(\d+)`)

// parseSockCmd reads a command line that runs ss or netstat, possibly in a
// pipeline: which columns ss prints, the protocol, and for counts the column
// counted and the state kept.
func parseSockCmd(cmd string) (sockCmd, bool) {
	var c sockCmd
	segs := splitPipeline(cmd)
	if len(segs) == 0 {
		return c, false
	}
	words := shellWords(segs[0])
	at := -1
	for i, w := range words {
		if b := path.Base(w); b == "ss" || b == "netstat" {
			c.tool, at = b, i
			break
		}
	}
	if at < 0 {
		return c, false
	}
	args := words[at+1:]
	var states []string
	if c.tool == "ss" {
		states = c.ssArgs(args)
	} else {
		c.netstatArgs(args)
	}
	for _, seg := range segs[1:] {
		w := shellWords(seg)
		if len(w) == 0 {
			continue
		}
		switch path.Base(w[0]) {
		case "grep", "egrep", "fgrep", "zgrep":
			invert := false
			var pats []string
			for k := 1; k < len(w); k++ {
				a := w[k]
				if a == "-e" && k+1 < len(w) {
					pats = append(pats, w[k+1])
					k++
					continue
				}
				if strings.HasPrefix(a, "-") && len(a) > 1 {
					invert = invert || a == "--invert-match" || strings.Contains(a, "v") && !strings.HasPrefix(a, "--")
					continue
				}
				pats = append(pats, a)
			}
			if !invert {
				for _, p := range pats {
					states = append(states, stateWords(p)...)
				}
			}
		case "awk", "gawk", "mawk", "nawk":
			prog := ""
			for k := 1; k < len(w); k++ {
				a := w[k]
				if a == "-F" || a == "-v" || a == "-f" {
					k++
					continue
				}
				if strings.HasPrefix(a, "-") {
					continue
				}
				prog = a
				break
			}
			if m := awkPrintRe.FindStringSubmatch(prog); m != nil && c.column == "" && !c.count {
				n, _ := strconv.Atoi(m[1])
				c.column = c.columnName(n)
				if c.column == "" {
					c.column = "?"
				}
			}
			states = append(states, stateWords(prog)...)
		case "uniq":
			for _, a := range w[1:] {
				if a == "--count" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
					c.count = true
				}
			}
		}
	}
	if c.column == "?" {
		c.column = ""
	}
	for _, s := range states {
		if s == "" {
			continue
		}
		if c.state != "" && c.state != s {
			c.ambState = true
		}
		c.state = s
	}
	if c.ambState {
		c.state = ""
	}
	return c, true
}

// ssArgs reads ss options and returns the states of its filter.
func (c *sockCmd) ssArgs(args []string) []string {
	dbs := map[string]bool{}
	query := func(v string) {
		for _, q := range strings.Split(v, ",") {
			switch q = strings.TrimPrefix(q, "!"); q {
			case "all":
				dbs["tcp"], dbs["udp"], dbs["unix"] = true, true, true
			case "inet":
				dbs["tcp"], dbs["udp"], dbs["raw"] = true, true, true
			case "unix", "unix_stream", "unix_dgram", "unix_seqpacket":
				dbs["unix"] = true
			case "packet", "packet_raw", "packet_dgram":
				dbs["packet"] = true
			case "vsock", "vsock_stream", "vsock_dgram":
				dbs["vsock"] = true
			default:
				dbs[q] = true
			}
		}
	}
	family := func(v string) {
		switch v {
		case "inet", "inet6":
			if len(dbs) == 0 {
				dbs["tcp"], dbs["udp"], dbs["raw"] = true, true, true
			}
		case "unix":
			dbs["unix"] = true
		case "link":
			dbs["packet"] = true
		default:
			dbs[v] = true
		}
	}
	var states []string
	filterStates, exclude := 0, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			switch name {
			case "tcp", "udp", "raw", "sctp", "dccp", "mptcp", "tipc", "xdp", "vsock", "packet", "unix":
				dbs[name] = true
			case "query", "socket":
				if !hasVal {
					val = next()
				}
				query(val)
			case "family":
				if !hasVal {
					val = next()
				}
				family(val)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 't':
					dbs["tcp"] = true
				case 'u':
					dbs["udp"] = true
				case 'w':
					dbs["raw"] = true
				case 'x':
					dbs["unix"] = true
				case 'S':
					dbs["sctp"] = true
				case 'd':
					dbs["dccp"] = true
				case 'M':
					dbs["mptcp"] = true
				case '0':
					dbs["packet"] = true
				case 'A', 'f', 'F', 'N':
					v := a[k+1:]
					if v == "" {
						v = next()
					}
					if a[k] == 'A' {
						query(v)
					} else if a[k] == 'f' {
						family(v)
					}
					k = len(a)
				}
			}
		case a == "state" || a == "exclude":
			exclude = exclude || a == "exclude"
			v := strings.ToLower(next())
			filterStates++
			if st, ok := ssFilterStates[v]; ok && st != "" {
				states = append(states, st)
			} else {
				filterStates++ // a group of states
			}
		}
	}
	c.netid = len(dbs) != 1
	if len(dbs) == 1 {
		for db := range dbs {
			switch db {
			case "unix", "packet", "netlink", "vsock", "tipc", "xdp":
				c.skip = true
			default:
				c.proto = db
			}
		}
	}
	if filterStates == 1 && !exclude && len(states) == 1 {
		c.noState = true
		return states
	}
	if exclude {
		return nil
	}
	return states
}

// netstatArgs reads netstat options.
func (c *sockCmd) netstatArgs(args []string) {
	dbs := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"):
			switch a[2:] {
			case "tcp", "udp", "raw", "unix", "udplite", "sctp":
				dbs[a[2:]] = true
			case "wide", "notrim":
				c.wide = true
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 't':
					dbs["tcp"] = true
				case 'u':
					dbs["udp"] = true
				case 'w':
					dbs["raw"] = true
				case 'x':
					dbs["unix"] = true
				case 'U':
					dbs["udplite"] = true
				case 'S':
					dbs["sctp"] = true
				case 'W', 'T':
					c.wide = true
				case 'A':
					v := a[k+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					for _, fam := range strings.Split(v, ",") {
						if fam == "unix" {
							dbs["unix"] = true
						} else {
							dbs["tcp"], dbs["udp"] = true, true
						}
					}
					k = len(a)
				}
			}
		}
	}
	if len(dbs) == 1 {
		for db := range dbs {
			if db == "unix" {
				c.skip = true
			} else {
				c.proto = db
			}
		}
	}
}

// columnName names column n (1-based, as awk counts) of the tool's rows.
func (c *sockCmd) columnName(n int) string {
	var cols []string
	if c.tool == "netstat" {
		cols = []string{"proto", "recvq", "sendq", "local", "peer", "state"}
	} else {
		if c.netid {
			cols = append(cols, "netid")
		}
		if !c.noState {
			cols = append(cols, "state")
		}
		cols = append(cols, "recvq", "sendq", "local", "peer")
	}
	if n < 1 || n > len(cols) {
		return ""
	}
	switch cols[n-1] {
	case "state", "local", "peer":
		return cols[n-1]
	}
	return ""
}

// splitPipeline splits a command line at the pipes outside quotes.
func splitPipeline(cmd string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '|':
			if i+1 < len(cmd) && cmd[i+1] == '|' { // ||: not a pipe
				i++
				continue
			}
			out = append(out, cmd[start:i])
			start = i + 1
		}
	}
	return append(out, cmd[start:])
}

// shellWords splits one command into words, removing quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// sniffSockets scores lines of ss (tool "ss") or netstat output.
func sniffSockets(head []byte, tool string) int {
	if !text.IsText(head) {
		return 0
	}
	sr := &sockReader{cur: -1, skipped: map[string]int{}, l: text.NewLines(strings.NewReader(""), "", &model.ErrorList{})}
	matched, total, strong := 0, 0, false
	groups := false // inside netstat -g's group memberships
	for _, line := range text.HeadLines(head, 200) {
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
		if _, cmd, ok := text.Prompt(line); ok {
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

// netstatGroupBanner reports whether t is the banner of netstat -g's
// multicast group memberships ("IPv6/IPv4 Group Memberships"): a table
// without sockets, skipped like the non-Internet sections.
func netstatGroupBanner(t string) bool {
	return strings.HasSuffix(t, "Group Memberships") && strings.HasPrefix(t, "IPv")
}

func sniffSS(_ string, head []byte) int      { return sniffSockets(head, "ss") }
func sniffNetstat(_ string, head []byte) int { return sniffSockets(head, "netstat") }
