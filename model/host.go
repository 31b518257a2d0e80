package model

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Sysctl is one kernel parameter, from `sysctl -a`, `sysctl NAME`, a
// /proc/sys path listing, or a collector's JSON map.
type Sysctl struct {
	Node  string `json:"node,omitempty"`
	Name  string `json:"name"`  // dotted form: net.ipv4.ip_local_port_range
	Value string `json:"value"` // as printed, whitespace collapsed to single spaces
	Pos   Pos    `json:"pos"`
}

// Sysctl returns the last value of the parameter name seen for node; node ""
// matches any node. Later inputs win, as a later `sysctl -w` would.
func (s *Snapshot) Sysctl(node, name string) (Sysctl, bool) {
	var out Sysctl
	found := false
	for _, sc := range s.Sysctls {
		if sc.Name == name && (node == "" || sc.Node == node || sc.Node == "") {
			out, found = sc, true
		}
	}
	return out, found
}

// PortRange is an inclusive range of ports.
type PortRange struct {
	First uint16 `json:"first"`
	Last  uint16 `json:"last"`
}

// String formats r as "first-last".
func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Contains reports whether port lies in r.
func (r PortRange) Contains(port uint16) bool { return port >= r.First && port <= r.Last }

// Len returns the number of ports in r.
func (r PortRange) Len() int { return int(r.Last) - int(r.First) + 1 }

// ParsePortRange reads "30000-32767", "1024 65000" (the ip_local_port_range
// form, tabs or spaces) or a single port "8080".
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	var a, b string
	if i := strings.IndexAny(s, "- \t"); i >= 0 {
		a, b = s[:i], strings.TrimLeft(s[i:], "- \t")
	} else {
		a, b = s, s
	}
	first, err := strconv.ParseUint(a, 10, 16)
	if err != nil {
		return PortRange{}, fmt.Errorf("port range %q: bad first port", s)
	}
	last, err := strconv.ParseUint(b, 10, 16)
	if err != nil {
		return PortRange{}, fmt.Errorf("port range %q: bad last port", s)
	}
	if last < first {
		return PortRange{}, fmt.Errorf("port range %q: last port below first", s)
	}
	return PortRange{First: uint16(first), Last: uint16(last)}, nil
}

// ParsePortList reads a comma-separated list of ports and ranges, the form
// of net.ipv4.ip_local_reserved_ports ("30000-32767,8080"). An empty string
// is an empty list.
func ParsePortList(s string) ([]PortRange, error) {
	var out []PortRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		r, err := ParsePortRange(part)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// IPVSService is one IPVS virtual service with its real servers, from
// `ipvsadm -Ln` and its variants (--stats, --rate, --thresholds,
// --persistent-conn, --save). When one file lists the same service several
// times in different forms (the save form, then --rate, then --stats, as
// log collectors write them), the listings are merged into one record that
// keeps the position of the first.
type IPVSService struct {
	Node       string         `json:"node,omitempty"`
	Proto      string         `json:"proto"`            // TCP, UDP, SCTP, or FWM for firewall-mark services
	Addr       netip.AddrPort `json:"addr"`             // virtual address and port (zero for FWM)
	FWMark     uint32         `json:"fwmark,omitempty"` // for FWM services
	Scheduler  string         `json:"scheduler,omitempty"`
	Persistent int            `json:"persistent,omitempty"` // persistence timeout in seconds; 0 = none
	Flags      []string       `json:"flags,omitempty"`      // other flags as printed (ops, pe sip, mask 255.255.255.0, sh-port, IPv6 for FWM ...)
	Stats      *IPVSCounters  `json:"stats,omitempty"`      // from --stats: totals since the counters were zeroed
	Rate       *IPVSCounters  `json:"rate,omitempty"`       // from --rate: per second (CPS, InPPS, OutPPS, InBPS, OutBPS)
	// Note says what could not be read exactly, such as a port printed as
	// a service name by ipvsadm without -n (the port is then 0).
	Note  string     `json:"note,omitempty"`
	Reals []IPVSReal `json:"reals"`
	Pos   Pos        `json:"pos"`
}

// IPVSReal is a real server behind an IPVS virtual service.
type IPVSReal struct {
	Addr        netip.AddrPort `json:"addr"`
	Forward     string         `json:"forward,omitempty"`     // Masq, Local, Route, Tunnel
	TunnelInfo  string         `json:"tunnel_info,omitempty"` // --tun-info column, such as "ipip"
	Weight      int            `json:"weight"`                // 0 = quiesced: no new connections
	ActiveConn  int            `json:"active_conn"`
	InactConn   int            `json:"inact_conn"`
	PersistConn int            `json:"persist_conn,omitempty"` // from --persistent-conn
	UThreshold  int            `json:"u_threshold,omitempty"`  // from --thresholds
	LThreshold  int            `json:"l_threshold,omitempty"`  // from --thresholds
	Stats       *IPVSCounters  `json:"stats,omitempty"`
	Rate        *IPVSCounters  `json:"rate,omitempty"`
	Note        string         `json:"note,omitempty"`
	Pos         Pos            `json:"pos"`
}

// IPVSCounters are the five counters of `ipvsadm -Ln --stats` (Conns,
// InPkts, OutPkts, InBytes, OutBytes) or `--rate` (CPS, InPPS, OutPPS, InBPS,
// OutBPS). Without --exact, ipvsadm rounds large numbers down to a K, M, G or
// T multiple; they are read as that multiple.
type IPVSCounters struct {
	Conns    uint64 `json:"conns"`
	InPkts   uint64 `json:"in_pkts"`
	OutPkts  uint64 `json:"out_pkts"`
	InBytes  uint64 `json:"in_bytes"`
	OutBytes uint64 `json:"out_bytes"`
}

// IPVSConn is one entry of the IPVS connection table (`ipvsadm -Lnc`).
type IPVSConn struct {
	Node    string         `json:"node,omitempty"`
	Proto   string         `json:"proto"`  // TCP, UDP, SCTP, or IP for other protocols
	Expire  int            `json:"expire"` // seconds left
	State   string         `json:"state"`  // ESTABLISHED, SYN_RECV, TIME_WAIT, FIN_WAIT, CLOSE, NONE, UDP ...
	Client  netip.AddrPort `json:"client"`
	Virtual netip.AddrPort `json:"virtual"`
	Dest    netip.AddrPort `json:"dest"`
	PEName  string         `json:"pe_name,omitempty"` // persistence engine (--persistent-conn listings)
	PEData  string         `json:"pe_data,omitempty"`
	Pos     Pos            `json:"pos"`
}

// Socket is one row of a socket table, from ss or netstat.
type Socket struct {
	Node    string         `json:"node,omitempty"`
	Proto   string         `json:"proto"`           // tcp, udp, tcp6, udp6 (netstat), raw, sctp, mptcp ...
	State   string         `json:"state"`           // ss spelling: LISTEN, ESTAB, TIME-WAIT, SYN-SENT, SYN-RECV, UNCONN ...; "" when not shown
	Local   netip.AddrPort `json:"local"`           // wildcard addresses are the unspecified address; IPv4-mapped IPv6 addresses are read as IPv4
	Peer    netip.AddrPort `json:"peer"`            // wildcard ports (*) are 0
	Iface   string         `json:"iface,omitempty"` // the %iface suffix of a local address
	RecvQ   int            `json:"recv_q"`
	SendQ   int            `json:"send_q"`
	Process string         `json:"process,omitempty"` // first process, as printed (see ProcessTruncated)
	PID     int            `json:"pid,omitempty"`
	// ProcessTruncated is set when the name may be cut short: ss prints
	// the kernel's 15-character comm, netstat cuts "PID/name" to 19
	// characters. Use MatchesProcess to compare names.
	ProcessTruncated bool         `json:"process_truncated,omitempty"`
	Users            []SocketUser `json:"users,omitempty"` // every process holding the socket (ss users:(...))
	Timer            string       `json:"timer,omitempty"` // ss -o timer:(...) inside the parentheses ("keepalive,119min,0"), or netstat -o's Timer column ("off (0.00/0/0)")
	Info             string       `json:"info,omitempty"`  // ss -i/-m/-e detail lines, whitespace collapsed
	// Note says what could not be read exactly: a port printed as a service
	// name (ss or netstat without -n: the port is then 0), an address cut
	// short by netstat's 23-column limit.
	Note string `json:"note,omitempty"`
	Pos  Pos    `json:"pos"`
}

// SocketUser is one process holding a socket.
type SocketUser struct {
	Name string `json:"name"`
	PID  int    `json:"pid,omitempty"`
	FD   int    `json:"fd,omitempty"`
}

// MatchesProcess reports whether the socket's process is name, allowing for
// the name having been cut short by ss or netstat ("kube-controll" matches
// kube-controller-manager).
func (s Socket) MatchesProcess(name string) bool {
	if s.Process == name {
		return true
	}
	return s.ProcessTruncated && s.Process != "" && strings.HasPrefix(name, s.Process)
}

// SocketCount is a count of sockets: a line of `ss -s` (State "" counts
// every socket of Proto; Family "ipv4"/"ipv6" splits by family), a line of
// a count by state such as `ss -tan | awk '{print $1}' | sort | uniq -c`
// (State set), or a line of a count by address such as `ss -tan | grep
// TIME-WAIT | awk '{print $4}' | ... | uniq -c` (Local or Peer set, or Addr
// when nothing says which column was counted).
type SocketCount struct {
	Node   string     `json:"node,omitempty"`
	Proto  string     `json:"proto"`            // tcp, udp, raw, inet, frag, or "" for every socket
	State  string     `json:"state,omitempty"`  // ss spelling (TIME-WAIT, ESTAB, CLOSED, SYN-RECV) or "orphaned"
	Family string     `json:"family,omitempty"` // ipv4 or ipv6 when the count is split by family
	Local  netip.Addr `json:"local,omitzero"`   // sockets with this local address
	Peer   netip.Addr `json:"peer,omitzero"`    // sockets with this peer address
	// Addr is the counted address when the input does not say whether it
	// is the local or the peer one (a bare `uniq -c` listing without the
	// command that made it).
	Addr netip.Addr `json:"addr,omitzero"`
	// Port is the port of the counted address when the count was by
	// address and port ("12 10.0.0.1:8080"); 0 otherwise.
	Port  uint16 `json:"port,omitempty"`
	Count int    `json:"count"`
	Pos   Pos    `json:"pos"`
}

// Neighbor is one ARP or NDP table entry (`ip neigh`, `arp -an`).
type Neighbor struct {
	Node  string     `json:"node,omitempty"`
	IP    netip.Addr `json:"ip"`
	MAC   string     `json:"mac,omitempty"` // lower case, colon separated; empty when incomplete
	Dev   string     `json:"dev,omitempty"`
	State string     `json:"state,omitempty"` // REACHABLE, STALE, DELAY, PROBE, FAILED, INCOMPLETE, PERMANENT, NOARP ...
	Flags []string   `json:"flags,omitempty"` // router, proxy, extern_learn ...
	Pos   Pos        `json:"pos"`
}

// IfAddr is one address on an interface (`ip addr`, `ip -br addr`).
type IfAddr struct {
	Node   string       `json:"node,omitempty"`
	Dev    string       `json:"dev"`
	State  string       `json:"state,omitempty"` // the link's operational state: UP, DOWN, UNKNOWN ...
	Prefix netip.Prefix `json:"prefix"`
	Scope  string       `json:"scope,omitempty"` // global, link, host ...
	Label  string       `json:"label,omitempty"` // address label when it differs from Dev (eth0:1)
	Flags  []string     `json:"flags,omitempty"` // secondary, dynamic, deprecated, noprefixroute ...
	MAC    string       `json:"mac,omitempty"`
	Pos    Pos          `json:"pos"`
}

// Route is one routing table entry (`ip route`).
type Route struct {
	Node     string         `json:"node,omitempty"`
	Type     string         `json:"type,omitempty"` // local, broadcast, blackhole, unreachable, prohibit, throw ...; "" for unicast
	Dst      netip.Prefix   `json:"dst"`            // 0.0.0.0/0 or ::/0 for default
	Via      netip.Addr     `json:"via,omitzero"`
	Dev      string         `json:"dev,omitempty"`
	Src      netip.Addr     `json:"src,omitzero"`
	Table    string         `json:"table,omitempty"`
	Proto    string         `json:"proto,omitempty"` // kernel, boot, static, dhcp, bird ...
	Scope    string         `json:"scope,omitempty"`
	Metric   int            `json:"metric,omitempty"`
	Nexthops []RouteNexthop `json:"nexthops,omitempty"` // multipath routes
	Raw      string         `json:"raw"`
	Pos      Pos            `json:"pos"`
}

// RouteNexthop is one path of a multipath route.
type RouteNexthop struct {
	Via    netip.Addr `json:"via,omitzero"`
	Dev    string     `json:"dev,omitempty"`
	Weight int        `json:"weight,omitempty"`
}

// ConntrackStats are one CPU's connection tracking counters (`conntrack
// -S`, or a row of /proc/net/stat/nf_conntrack).
type ConntrackStats struct {
	Node string `json:"node,omitempty"`
	CPU  int    `json:"cpu"`
	// Counters by the names conntrack -S prints: found, invalid, insert,
	// insert_failed, drop, early_drop, error, search_restart,
	// clash_resolve, chaintoolong, and on older kernels searched, new,
	// ignore, delete, delete_list. The /proc table's names are mapped to
	// them (clashres is clash_resolve, icmp_error is error, chainlength is
	// chaintoolong); its entries column (the table's size) is kept as
	// entries.
	Counters map[string]uint64 `json:"counters"`
	Pos      Pos               `json:"pos"`
}

// ConntrackEntry is one conntrack table entry (`conntrack -L`, or
// /proc/net/nf_conntrack), or one event of `conntrack -E` (Event set).
type ConntrackEntry struct {
	Node string `json:"node,omitempty"`
	// Event is the event of a `conntrack -E` line: NEW, UPDATE or
	// DESTROY; "" for a table entry.
	Event string `json:"event,omitempty"`
	// Time is the time of an event printed with `-o timestamp`; zero
	// otherwise.
	Time time.Time `json:"time,omitzero"`

	Family    string `json:"family,omitempty"` // ipv4 or ipv6
	Proto     string `json:"proto"`            // tcp, udp, icmp, icmpv6, sctp ...
	State     string `json:"state,omitempty"`  // TCP state: SYN_SENT, ESTABLISHED, TIME_WAIT ...
	Orig      Tuple  `json:"orig"`
	Reply     Tuple  `json:"reply"`
	Unreplied bool   `json:"unreplied,omitempty"`
	Assured   bool   `json:"assured,omitempty"`
	Timeout   int    `json:"timeout,omitempty"`
	Mark      uint32 `json:"mark,omitempty"`
	Zone      int    `json:"zone,omitempty"`
	Use       int    `json:"use,omitempty"`
	// Packet and byte counters, when conntrack accounting is on.
	OrigPackets  uint64   `json:"orig_packets,omitempty"`
	OrigBytes    uint64   `json:"orig_bytes,omitempty"`
	ReplyPackets uint64   `json:"reply_packets,omitempty"`
	ReplyBytes   uint64   `json:"reply_bytes,omitempty"`
	Flags        []string `json:"flags,omitempty"` // other flags as printed: OFFLOAD, HW_OFFLOAD, SEEN_REPLY ...
	// HiddenDst is the placeholder a paste printed instead of the original
	// destination's address (dst=<clusterIp>), "" when the address is
	// printed. Orig.Dst then holds the port only, and its address is
	// invalid.
	HiddenDst string `json:"hidden_dst,omitempty"`
	// ICMP holds the type, code and id of an ICMP or ICMPv6 entry's
	// original tuple (an echo request is type 8, or 128 for ICMPv6).
	ICMP *ConntrackICMP `json:"icmp,omitempty"`
	Pos  Pos            `json:"pos"`
}

// ConntrackICMP is the ICMP part of a conntrack tuple: type=8 code=0 id=N.
type ConntrackICMP struct {
	Type int    `json:"type"`
	Code int    `json:"code"`
	ID   uint16 `json:"id"`
}

// DNAT reports whether the entry's destination was translated: the reply
// comes from somewhere else than the original destination (a Service
// ClusterIP or NodePort DNATed to a pod).
func (c ConntrackEntry) DNAT() bool { return c.Reply.Src != c.Orig.Dst }

// SNAT reports whether the entry's source was translated (masquerade): the
// reply goes to somewhere else than the original source.
func (c ConntrackEntry) SNAT() bool { return c.Reply.Dst != c.Orig.Src }

// Tuple is a directed address/port pair.
type Tuple struct {
	Src netip.AddrPort `json:"src"`
	Dst netip.AddrPort `json:"dst"`
}
