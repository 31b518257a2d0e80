package model

import (
	"net/netip"
	"slices"
	"strings"
)

// ClientOutcome is how a client's attempt to reach a destination ended, as the
// client printed it.
type ClientOutcome string

// The outcomes a client transcript tells.
const (
	// ClientConnected: the connection was made (curl's "Connected to",
	// nc's "succeeded!", telnet's "Connected to"), or an HTTP response
	// came back.
	ClientConnected ClientOutcome = "connected"
	// ClientRefused: the destination answered with a reset (ECONNREFUSED).
	ClientRefused ClientOutcome = "refused"
	// ClientTimeout: nothing came back before the client gave up
	// ("Connection timed out", "i/o timeout", dig's "connection timed
	// out; no servers could be reached").
	ClientTimeout ClientOutcome = "timeout"
	// ClientNoAnswer: the command printed nothing until it was
	// interrupted (^C after a hanging dig or curl).
	ClientNoAnswer ClientOutcome = "no-answer"
	// ClientNoRoute: "No route to host" (EHOSTUNREACH: an ICMP host
	// unreachable or prohibited, or a failed neighbour resolution).
	ClientNoRoute ClientOutcome = "no-route"
	// ClientNetUnreachable: "Network is unreachable" (ENETUNREACH: no
	// route in the client's table).
	ClientNetUnreachable ClientOutcome = "net-unreachable"
	// ClientReset: an established connection was reset ("connection reset
	// by peer", "Empty reply from server").
	ClientReset ClientOutcome = "reset"
	// ClientAddrUnavailable: "Cannot assign requested address"
	// (EADDRNOTAVAIL: no source port or address left).
	ClientAddrUnavailable ClientOutcome = "addr-unavailable"
	// ClientUnresolved: the client could not resolve the destination's
	// name ("Could not resolve host", "no such host", "bad address").
	ClientUnresolved ClientOutcome = "unresolved"
	// ClientAnswered: a DNS server answered; Status holds its rcode
	// (NOERROR, NXDOMAIN, SERVFAIL, REFUSED).
	ClientAnswered ClientOutcome = "answered"
)

// Failed reports whether the outcome is a failure to reach the
// destination (not a connection made, nor a DNS answer).
func (o ClientOutcome) Failed() bool {
	return o != ClientConnected && o != ClientAnswered && o != ""
}

// ClientResult is one client's attempt to reach a destination as a
// client-side transcript tells it: `curl -v`, wget, `nc -vz`, telnet,
// dig and nslookup, kubectl's dialing errors, an application's error line.
// It says which destination failed how, seen from the client.
type ClientResult struct {
	Pos  Pos    `json:"pos"` // the line that says how it ended
	Node string `json:"node,omitempty"`
	// Tool is the client: "curl", "wget", "nc", "telnet", "dig",
	// "nslookup", "arping", "kubectl" or "app" (an application's own
	// line).
	Tool string `json:"tool"`
	// Command is the command line the transcript shows, "" when none.
	Command string `json:"command,omitempty"`
	// Target is the destination as printed: "10.96.0.1:443",
	// "kubernetes-dashboard", "www.google.com".
	Target string `json:"target"`
	// Addr is the destination's address and port when printed (the port
	// 0 when not); for a DNS lookup the server asked.
	Addr netip.AddrPort `json:"addr,omitzero"`
	// Name is the host name asked for: the name looked up, or the URL's
	// host when it is a name.
	Name string `json:"name,omitempty"`
	// Outcome is how it ended.
	Outcome ClientOutcome `json:"outcome"`
	// Status is the DNS rcode (NOERROR, NXDOMAIN, SERVFAIL) or the HTTP
	// status code ("200", "503"), when printed.
	Status string `json:"status,omitempty"`
	// Answers are the addresses a DNS answer or a name resolution gave.
	Answers []netip.Addr `json:"answers,omitempty"`
	// MAC is the hardware address that answered an ARP request
	// (arping), in lower case: one address answered from two MACs is two
	// results.
	MAC string `json:"mac,omitempty"`
	// Count is how many times the failure happened when the transcript
	// counts lines (`grep ... | wc -l`), 0 otherwise (once).
	Count int `json:"count,omitempty"`
	// Message is the line that says how it ended, trimmed.
	Message string `json:"message"`
}

// Dests returns the addresses the attempt was made to: the one the
// client printed, and the address literals of its command line when they
// differ (a paste whose addresses were edited apart, a name curl resolved).
// For a DNS lookup they are the servers asked.
func (r *ClientResult) Dests() []netip.Addr {
	var out []netip.Addr
	add := func(a netip.Addr) {
		if a.IsValid() && !slices.Contains(out, a.Unmap()) {
			out = append(out, a.Unmap())
		}
	}
	add(r.Addr.Addr())
	for _, w := range strings.Fields(r.Command) {
		w = strings.TrimPrefix(w, "@")
		if _, rest, ok := strings.Cut(w, "://"); ok {
			w = rest
		}
		w, _, _ = strings.Cut(w, "/")
		if ap, err := netip.ParseAddrPort(w); err == nil {
			add(ap.Addr())
		} else if a, err := netip.ParseAddr(strings.Trim(w, "[]")); err == nil {
			add(a)
		}
	}
	return out
}
