package netfilter

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/services"
	"github.com/netmortem/netmortem/model"
)

// ipvsNames reads the addresses ipvsadm prints without -n and remembers
// the names it could not resolve, for one warning per listing.
type ipvsNames struct {
	unresolved []string // in the order first met
	seen       map[string]bool
	first      model.Pos // the line of the first unresolved name
	firstLine  string
}

// addr reads "10.96.0.1:443", "[fd00::1]:443", "10.96.0.1:https" (a port
// printed as its /etc/services name, resolved through Debian's and the
// IANA registry's names) and "host.example:http" (a host name, which
// cannot be resolved offline). What is not resolved is 0 in the address
// (the zero address for a host name) and named in note; err is set when s
// is not an address at all.
func (n *ipvsNames) addr(s string, pos model.Pos, line string) (a netip.AddrPort, note string, err error) {
	if a, err := netip.ParseAddrPort(s); err == nil {
		return a, "", nil
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return a, "", fmt.Errorf("address %q: want IP:PORT", s)
	}
	host, port := s[:i], s[i+1:]
	var notes []string
	var p uint16
	if v, perr := strconv.ParseUint(port, 10, 16); perr == nil {
		p = uint16(v)
	} else if v, ok := services.Port(port); ok {
		p = v
	} else if ipvsIsName(port) {
		notes = append(notes, "port name "+port+" not resolved")
		n.note(port, pos, line)
	} else {
		return a, "", fmt.Errorf("address %q: port %q is neither a number nor a service name", s, port)
	}
	var ip netip.Addr
	if h, ok := strings.CutPrefix(host, "["); ok {
		host = strings.TrimSuffix(h, "]")
	}
	if v, perr := netip.ParseAddr(host); perr == nil {
		ip = v
	} else if ipvsIsName(host) {
		notes = append(notes, "host name "+host+" not resolved")
		n.note(host, pos, line)
	} else {
		return a, "", fmt.Errorf("address %q: %q is neither an IP address nor a host name", s, host)
	}
	return netip.AddrPortFrom(ip, p), strings.Join(notes, "; "), nil
}

// ipvsIsName reports whether s can be a host or service name: letters,
// digits, '-', '_' and '.', with a letter somewhere.
func ipvsIsName(s string) bool {
	letter := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.':
		default:
			return false
		}
	}
	return letter
}

func (n *ipvsNames) note(name string, pos model.Pos, line string) {
	if n.seen == nil {
		n.seen = map[string]bool{}
		n.first, n.firstLine = pos, line
	}
	if !n.seen[name] {
		n.seen[name] = true
		n.unresolved = append(n.unresolved, name)
	}
}

// report adds one warning for every name not resolved, at the line of the
// first.
func (n *ipvsNames) report(errs *model.ErrorList) {
	if len(n.unresolved) == 0 {
		return
	}
	names := slices.Clone(n.unresolved)
	more := ""
	if len(names) > 10 {
		more = fmt.Sprintf(" and %d more", len(names)-10)
		names = names[:10]
	}
	errs.Addf(n.first, n.firstLine, "%d names ipvsadm printed without -n could not be resolved (%s%s): their addresses or ports are read as 0, and the services and real servers carry a note",
		len(n.unresolved), strings.Join(names, ", "), more)
}

// ipvsNamedOK reports whether s reads as an address of ipvsadm without -n.
func ipvsNamedOK(s string) bool {
	var n ipvsNames
	_, _, err := n.addr(s, model.Pos{}, "")
	return err == nil
}
