package model

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
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
// `ipvsadm -Ln` and its variants.
type IPVSService struct {
	Node       string         `json:"node,omitempty"`
	Proto      string         `json:"proto"`            // TCP, UDP, SCTP, or FWM for firewall-mark services
	Addr       netip.AddrPort `json:"addr"`             // virtual address and port (zero for FWM)
	FWMark     uint32         `json:"fwmark,omitempty"` // for FWM services
	Scheduler  string         `json:"scheduler,omitempty"`
	Persistent int            `json:"persistent,omitempty"` // persistence timeout in seconds; 0 = none
	Flags      []string       `json:"flags,omitempty"`      // other flags as printed (ops, pe sip, ...)
	Reals      []IPVSReal     `json:"reals"`
	Pos        Pos            `json:"pos"`
}

// IPVSReal is a real server behind an IPVS virtual service.
type IPVSReal struct {
	Addr       netip.AddrPort `json:"addr"`
	Forward    string         `json:"forward,omitempty"` // Masq, Local, Route, Tunnel
	Weight     int            `json:"weight"`
	ActiveConn int            `json:"active_conn"`
	InactConn  int            `json:"inact_conn"`
	Pos        Pos            `json:"pos"`
}

// Socket is one row of a socket table, from ss or netstat.
type Socket struct {
	Node    string         `json:"node,omitempty"`
	Proto   string         `json:"proto"` // tcp, udp, tcp6, udp6, raw, unix ...
	State   string         `json:"state"` // ss spelling: LISTEN, ESTAB, TIME-WAIT, SYN-SENT, UNCONN ...
	Local   netip.AddrPort `json:"local"` // wildcard addresses are the unspecified address
	Peer    netip.AddrPort `json:"peer"`
	Iface   string         `json:"iface,omitempty"` // the %iface suffix of a local address
	RecvQ   int            `json:"recv_q"`
	SendQ   int            `json:"send_q"`
	Process string         `json:"process,omitempty"`
	PID     int            `json:"pid,omitempty"`
	Pos     Pos            `json:"pos"`
}

// Neighbor is one ARP or NDP table entry (`ip neigh`, `arp -an`).
type Neighbor struct {
	Node  string     `json:"node,omitempty"`
	IP    netip.Addr `json:"ip"`
	MAC   string     `json:"mac,omitempty"` // lower case, colon separated; empty when incomplete
	Dev   string     `json:"dev,omitempty"`
	State string     `json:"state,omitempty"` // REACHABLE, STALE, DELAY, FAILED, PERMANENT ...
	Pos   Pos        `json:"pos"`
}

// IfAddr is one address on an interface (`ip addr`).
type IfAddr struct {
	Node   string       `json:"node,omitempty"`
	Dev    string       `json:"dev"`
	Prefix netip.Prefix `json:"prefix"`
	MAC    string       `json:"mac,omitempty"`
	Pos    Pos          `json:"pos"`
}

// Route is one routing table entry (`ip route`).
type Route struct {
	Node  string       `json:"node,omitempty"`
	Dst   netip.Prefix `json:"dst"` // 0.0.0.0/0 for default
	Via   netip.Addr   `json:"via,omitzero"`
	Dev   string       `json:"dev,omitempty"`
	Src   netip.Addr   `json:"src,omitzero"`
	Table string       `json:"table,omitempty"`
	Raw   string       `json:"raw"`
	Pos   Pos          `json:"pos"`
}

// ConntrackEntry is one conntrack table entry (`conntrack -L`).
type ConntrackEntry struct {
	Node      string `json:"node,omitempty"`
	Proto     string `json:"proto"`
	State     string `json:"state,omitempty"`
	Orig      Tuple  `json:"orig"`
	Reply     Tuple  `json:"reply"`
	Unreplied bool   `json:"unreplied,omitempty"`
	Assured   bool   `json:"assured,omitempty"`
	Timeout   int    `json:"timeout,omitempty"`
	Mark      uint32 `json:"mark,omitempty"`
	Pos       Pos    `json:"pos"`
}

// Tuple is a directed address/port pair.
type Tuple struct {
	Src netip.AddrPort `json:"src"`
	Dst netip.AddrPort `json:"dst"`
}
