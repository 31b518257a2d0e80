package host

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// SSFormat reads ss socket tables and summaries (see sockets.go).
var SSFormat = &format.Format{
	Name: "ss",
	Kind: model.KindSockets,
	Command: "ss -tanp, ss -lntup, ss -uanp, ss -tan state time-wait, ss -tanoeim, ss -s, and counts " +
		"of a column (ss -tan | grep TIME-WAIT | awk '{print $4}' | ... | sort | uniq -c)",
	Doc: "old `users:((\"nginx\",1234,6))` and new `users:((\"nginx\",pid=1234,fd=6))` process lists, " +
		"`%iface` suffixes, `[::1]:80`, `::ffff:` addresses (read as IPv4), `*` (read as `::`); " +
		"`-i`/`-m` continuation lines go to the socket's Info; unix, netlink and packet rows are " +
		"skipped; without a Netid column the protocol comes from the prompt's command (`-t`, " +
		"`-u`) or else from the states (UNCONN: udp); a count's column and state are read from " +
		"the prompt's pipeline (`awk '{print $4}'`, `grep TIME-WAIT`, `state time-wait`); prompts" +
		" and banners name the node",
	Sniff: sniffSS,
	Parse: parseSocketTables,
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

// ssTokens splits the extras of an ss row into space-separated tokens,
// keeping parenthesized groups (with their quoted names) whole.
func ssTokens(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		if i = text.SkipBlanks(s, i); i >= len(s) {
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

// ssFilterStates maps the state names of ss filters ("state time-wait") to
// the spelling of its State column; groups are "".
var ssFilterStates = map[string]string{
	"established": "ESTAB", "syn-sent": "SYN-SENT", "syn-recv": "SYN-RECV", "fin-wait-1": "FIN-WAIT-1",
	"fin-wait-2": "FIN-WAIT-2", "time-wait": "TIME-WAIT", "closed": "UNCONN", "close-wait": "CLOSE-WAIT",
	"last-ack": "LAST-ACK", "listening": "LISTEN", "listen": "LISTEN", "closing": "CLOSING",
	"all": "", "connected": "", "synchronized": "", "bucket": "", "big": "",
}

// ssTables are the options of ss that list one kind of socket: -t tcp.
var ssTables = map[byte]string{'t': "tcp", 'u': "udp", 'w': "raw", 'x': "unix", 'S': "sctp", 'd': "dccp", 'M': "mptcp", '0': "packet"}

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
				if db, ok := ssTables[a[k]]; ok {
					dbs[db] = true
					continue
				}
				switch a[k] {
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

func sniffSS(_ string, head []byte) int { return sniffSockets(head, "ss") }
