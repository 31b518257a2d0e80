package host

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// NetstatFormat reads netstat socket tables (see sockets.go).
var NetstatFormat = &format.Format{
	Name: "netstat",
	Kind: model.KindSockets,
	Command: "netstat -lntup, netstat -tan, netstat -anp, netstat -neopa, and counts of a column " +
		"(netstat -tan | awk '{print $6}' | sort | uniq -c)",
	Doc: "states in ss spelling (ESTABLISHED reads ESTAB, UDP's empty State reads UNCONN); program" +
		" names cut to 19 columns (`kube-controll`) are marked truncated and still match their " +
		"process; an address cut to 23 columns (without `-W`) gets a note; UNIX and other " +
		"non-Internet sections, and `netstat -g` group memberships, are skipped; prompts " +
		"(`root@node3:~# netstat ...`) and banners name the node",
	Sniff: sniffNetstat,
	Parse: parseSocketTables,
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

// netstatTimerRe matches the first word of netstat -o's Timer column.
var netstatTimerRe = lazyre.New(`^(off|on|keepalive|timewait|probe|unkn-\d+)$`)

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

// netstatTables are the options of netstat that list one kind of socket:
// -t tcp.
var netstatTables = map[byte]string{'t': "tcp", 'u': "udp", 'w': "raw", 'x': "unix", 'U': "udplite", 'S': "sctp"}

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
				if db, ok := netstatTables[a[k]]; ok {
					dbs[db] = true
					continue
				}
				switch a[k] {
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

// netstatGroupBanner reports whether t is the banner of netstat -g's
// multicast group memberships ("IPv6/IPv4 Group Memberships"): a table
// without sockets, skipped like the non-Internet sections.
func netstatGroupBanner(t string) bool {
	return strings.HasSuffix(t, "Group Memberships") && strings.HasPrefix(t, "IPv")
}

func sniffNetstat(_ string, head []byte) int { return sniffSockets(head, "netstat") }
