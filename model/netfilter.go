package model

import (
	"net/netip"
	"strconv"
	"strings"
)

// Ruleset is a node's netfilter state: the tables, chains and rules of one
// `iptables-save`, `iptables -L`, `iptables -S` or `nft list ruleset` dump.
// Several listings of one file (`iptables -t nat -nvL` then `iptables
// -nvL`, or `-L CHAIN` for a few chains) are one Ruleset as long as they
// list different chains; a table or chain listed again starts the next one.
type Ruleset struct {
	Node   string   `json:"node,omitempty"`
	Family string   `json:"family"` // ipv4, ipv6, inet
	Format string   `json:"format"` // iptables-save, iptables-list, iptables-S, nft
	Tables []*Table `json:"tables"`
	Pos    Pos      `json:"pos"`
	// Backend is the kernel interface the rules live in: BackendNFT
	// (iptables-nft, whose iptables-save header names iptables-nft-save,
	// or an nft listing), BackendLegacy (iptables-legacy, whose header
	// names iptables-save, or any iptables before 1.8), "" when the dump
	// does not say (an iptables -L listing without its command).
	Backend string `json:"backend,omitempty"`
	// LegacyWarning is where iptables-nft warned "iptables-legacy tables
	// present": the node's legacy backend holds tables too, which the
	// kernel runs beside these. Zero when it did not.
	LegacyWarning Pos `json:"legacy_warning,omitzero"`
}

// The iptables backends of Ruleset.Backend.
const (
	BackendLegacy = "legacy"
	BackendNFT    = "nft"
)

// Table is one netfilter table (filter, nat, mangle, raw).
type Table struct {
	// Name is the table's name; "" when the dump does not say (rule lines
	// cut out of a whole `iptables-save` with grep).
	Name   string   `json:"name"`
	Chains []*Chain `json:"chains"`
	// Sets are the elements of an nftables table's named sets (not the
	// verdict maps, whose elements become rules), by set name without
	// the @: "nodeport-ips" -> ["172.18.0.2"]. A rule that matches a set
	// keeps "@name" in its field (Dst "@nodeport-ips"). Nil for iptables.
	Sets map[string][]string `json:"sets,omitempty"`
	Pos  Pos                 `json:"pos"`
}

// SetElems returns the elements of the named set a rule field refers to
// ("@cluster-ips"), and whether the table has that set.
func (t *Table) SetElems(ref string) ([]string, bool) {
	name, ok := strings.CutPrefix(ref, "@")
	if !ok || t == nil {
		return nil, false
	}
	e, ok := t.Sets[name]
	return e, ok
}

// Chain is one chain with its rules in order.
type Chain struct {
	// Name is the chain's name; "" for rows cut out with grep from a
	// listing of several chains, whose chain cannot be known.
	Name   string `json:"name"`
	Policy string `json:"policy,omitempty"` // ACCEPT, DROP, or "" for user chains
	// Hook is the netfilter hook of an nftables base chain (prerouting,
	// input, forward, output, postrouting), "" for other chains and for
	// iptables dumps, whose chain names say it.
	Hook string `json:"hook,omitempty"`
	// Type is the type of an nftables base chain (filter, nat, route),
	// "" otherwise.
	Type string `json:"type,omitempty"`
	// Priority is the priority of an nftables base chain as a number
	// (dstnat is -100, "dstnat - 10" -110, srcnat 100): base chains of
	// one hook run from the lowest. 0 for other chains.
	Priority int     `json:"priority,omitempty"`
	Packets  uint64  `json:"packets,omitempty"`
	Bytes    uint64  `json:"bytes,omitempty"`
	Rules    []*Rule `json:"rules"`
	// References is the "(N references)" count of an iptables -L header,
	// 0 when not shown.
	References int `json:"references,omitempty"`
	Pos        Pos `json:"pos"`
}

// Rule is one netfilter rule. Raw keeps the rule as printed; the typed
// fields hold what netmortem understood of it, the same whichever form the
// dump had (iptables-save, iptables -S, or an iptables -L listing with or
// without -n and -v). A field is empty (or zero) when the rule does not
// match on it; Raw has everything else.
type Rule struct {
	// Raw is the rule's line as printed (an iptables -L row keeps its
	// column spacing; a line the shell or a pager broke is joined back).
	Raw string `json:"raw"`
	// Target is the jump target: ACCEPT, DNAT, KUBE-SVC-XXXX ...; "" for
	// a rule without one (it only counts packets).
	Target string `json:"target,omitempty"`
	// Goto is set for `-g CHAIN` (iptables -L shows "[goto]"): the chain
	// is entered without a return to this one.
	Goto bool `json:"goto,omitempty"`

	// Proto is the protocol matched: tcp, udp, sctp, icmp ... as
	// iptables-save names it ("6" and "17" of iptables 1.8.9's -n
	// listings read as tcp and udp); "" matches every protocol ("all",
	// "0").
	Proto    string `json:"proto,omitempty"`
	NotProto bool   `json:"not_proto,omitempty"` // ! -p
	// Src and Dst are the source and destination matches as printed:
	// "10.43.0.1/32" in iptables-save, "10.43.0.1" or a host name in
	// iptables -L; "" for any address (0.0.0.0/0, ::/0, "anywhere").
	// SrcPrefix and DstPrefix read them as prefixes.
	Src    string `json:"src,omitempty"`
	NotSrc bool   `json:"not_src,omitempty"` // ! -s
	Dst    string `json:"dst,omitempty"`
	NotDst bool   `json:"not_dst,omitempty"` // ! -d
	// InIface and OutIface are the -i and -o interfaces ("cali+" matches
	// a prefix); "" for any ("*" or "any" in listings).
	InIface     string `json:"in_iface,omitempty"`
	NotInIface  bool   `json:"not_in_iface,omitempty"`
	OutIface    string `json:"out_iface,omitempty"`
	NotOutIface bool   `json:"not_out_iface,omitempty"`
	// DPort and SPort are the destination and source port matches as
	// printed: "53", a range "30000:32767", a multiport list
	// "80,443,8080:8090", or the service names of a listing made without
	// -n ("domain", "https"; PortNumber reads both).
	DPort    string `json:"dport,omitempty"`
	NotDPort bool   `json:"not_dport,omitempty"`
	SPort    string `json:"sport,omitempty"`
	NotSPort bool   `json:"not_sport,omitempty"`

	// Comment is the -m comment text, unquoted ("kube-system/kube-dns:dns
	// cluster IP"); kube-proxy names the Service port in it.
	Comment string `json:"comment,omitempty"`
	// Statistic is the -m statistic mode: "random" (Probability is set)
	// or "nth" (NthEvery and NthPacket are set); "" without one.
	Statistic string `json:"statistic,omitempty"`
	// Probability is the chance of a random statistic match, as
	// kube-proxy spreads a Service over its endpoints: 0.33333333349 of
	// `--probability 0.33333333349` or `statistic mode random probability
	// 0.33333333349`.
	Probability float64 `json:"probability,omitempty"`
	// NthEvery and NthPacket are `--every N --packet P` of the nth mode.
	NthEvery  int `json:"nth_every,omitempty"`
	NthPacket int `json:"nth_packet,omitempty"`
	// MarkMatch is the -m mark value as printed: "0x4000/0x4000" of
	// `--mark 0x4000/0x4000` or `mark match 0x4000/0x4000`.
	MarkMatch string `json:"mark_match,omitempty"`
	NotMark   bool   `json:"not_mark,omitempty"`
	// CTState is the conntrack (or state) match: "NEW",
	// "RELATED,ESTABLISHED", "INVALID".
	CTState    string `json:"ct_state,omitempty"`
	NotCTState bool   `json:"not_ct_state,omitempty"`
	// DstType is the -m addrtype destination type: "LOCAL" on
	// kube-proxy's jump to KUBE-NODEPORTS.
	DstType string `json:"dst_type,omitempty"`
	// Recent is the -m recent match of ClientIP session affinity, nil
	// without one.
	Recent *RecentMatch `json:"recent,omitempty"`

	// SetMark is what the MARK target does, always in iptables-save's
	// `--set-xmark VALUE/MASK` form: "0x4000/0x4000" whether the dump
	// said `--set-xmark 0x4000/0x4000`, `--or-mark 0x4000` or `MARK or
	// 0x4000`; "0x4000/0x0" for `MARK xor 0x4000`.
	SetMark string `json:"set_mark,omitempty"`
	// ToDestination is the DNAT target's address as printed: "10.1.2.3:53"
	// of `--to-destination 10.1.2.3:53` or `tcp to:10.1.2.3:53`,
	// "[fd00::2]:53" for IPv6, ":0" for the `to::0` of a rule whose
	// endpoint address was lost.
	ToDestination string `json:"to_destination,omitempty"`
	// ToSource is the SNAT target's address as printed.
	ToSource string `json:"to_source,omitempty"`

	// Packets and Bytes are the rule's counters: `[p:b]` of iptables-save
	// -c, `-c p b` of iptables -S -v, the pkts and bytes columns of
	// iptables -L -v (K, M, G and T of a listing without -x are read as
	// multiples of 1000, so 62M is 62000000). Counted says they were
	// shown.
	Packets uint64 `json:"packets,omitempty"`
	Bytes   uint64 `json:"bytes,omitempty"`
	Counted bool   `json:"counted,omitempty"`
	// LineNumber is the num column of iptables -L --line-numbers, 0 when
	// not shown.
	LineNumber int `json:"line_number,omitempty"`

	Pos Pos `json:"pos"`
}

// RecentMatch is an -m recent match: kube-proxy's session affinity checks
// `--rcheck --seconds 10800 --name KUBE-SEP-XXXX` in the Service chain
// and records the client with `--set --name KUBE-SEP-XXXX` in the
// endpoint chain.
type RecentMatch struct {
	// Name is the list's name (kube-proxy uses the endpoint chain's).
	Name string `json:"name"`
	// Set is true for --set (the rule adds the source to the list), false
	// for --rcheck or --update (the rule matches sources on the list).
	Set bool `json:"set,omitempty"`
	// Seconds is the --seconds window of a check, 0 when unbounded.
	Seconds int `json:"seconds,omitempty"`
}

// SrcPrefix returns the source match as a prefix (a bare address is a
// /32 or /128). ok is false when the rule matches any source, or when the
// listing printed a host name.
func (r *Rule) SrcPrefix() (p netip.Prefix, ok bool) { return matchPrefix(r.Src) }

// DstPrefix returns the destination match as a prefix, as SrcPrefix does.
func (r *Rule) DstPrefix() (p netip.Prefix, ok bool) { return matchPrefix(r.Dst) }

func matchPrefix(s string) (netip.Prefix, bool) {
	if s == "" {
		return netip.Prefix{}, false
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			// iptables prints a non-CIDR mask as 10.0.0.0/255.255.0.0.
			a, m, _ := strings.Cut(s, "/")
			addr, err1 := netip.ParseAddr(a)
			mask, err2 := netip.ParseAddr(m)
			if err1 != nil || err2 != nil || addr.BitLen() != mask.BitLen() {
				return netip.Prefix{}, false
			}
			bits := 0
			for _, b := range mask.AsSlice() {
				for ; b&0x80 != 0; b <<= 1 {
					bits++
				}
			}
			return netip.PrefixFrom(addr, bits).Masked(), true
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

// wellKnownPorts are the /etc/services names (Debian's netbase) an
// iptables listing made without -n prints for common ports.
var wellKnownPorts = map[string]int{
	"ftp": 21, "ssh": 22, "telnet": 23, "smtp": 25, "domain": 53, "bootps": 67,
	"bootpc": 68, "tftp": 69, "http": 80, "www": 80, "kerberos": 88, "pop3": 110,
	"sunrpc": 111, "ntp": 123, "imap2": 143, "imap": 143, "snmp": 161, "bgp": 179,
	"ldap": 389, "https": 443, "microsoft-ds": 445, "isakmp": 500, "syslog": 514,
	"submission": 587, "ldaps": 636, "domain-s": 853, "imaps": 993, "pop3s": 995,
	"socks": 1080, "openvpn": 1194, "ms-sql-s": 1433, "radius": 1812, "nfs": 2049,
	"mysql": 3306, "ms-wbt-server": 3389, "ipsec-nat-t": 4500, "sip": 5060,
	"xmpp-client": 5222, "mdns": 5353, "postgresql": 5432, "amqp": 5672, "x11": 6000,
	"redis": 6379, "http-alt": 8080, "webcache": 8080, "tproxy": 8081, "git": 9418,
	"zabbix-agent": 10050, "zabbix-trapper": 10051,
}

// PortNumber reads one port of a DPort or SPort: a number, or the service
// name an iptables listing made without -n prints for the common ports
// ("domain" is 53, "https" 443, "http-alt" 8080). ok is false for a range,
// a list, or an unknown name.
func PortNumber(s string) (port int, ok bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n <= 65535
	}
	n, ok := wellKnownPorts[s]
	return n, ok
}

// Table returns the table called name, or nil.
func (r *Ruleset) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Chain returns the chain called name, or nil.
func (t *Table) Chain(name string) *Chain {
	for _, c := range t.Chains {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Rules returns how many rules the ruleset holds.
func (r *Ruleset) Rules() int {
	n := 0
	for _, t := range r.Tables {
		for _, c := range t.Chains {
			n += len(c.Rules)
		}
	}
	return n
}
