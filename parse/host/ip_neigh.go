package host

import (
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NeighFormat reads neighbor tables: ip neigh and arp.
var NeighFormat = &format.Format{
	Name:    "neigh",
	Kind:    model.KindNeighbors,
	Command: "ip neigh, ip -s neigh, ip neigh show nud all, ip -6 neigh, arp -an, arp -n",
	Doc: "NUD states (REACHABLE, STALE, DELAY, PROBE, FAILED, INCOMPLETE, PERMANENT, NOARP) and " +
		"flags (router, proxy, extern_learn); `-s` statistics are skipped; arp's PERM/M read as " +
		"PERMANENT, PUB/P as proxy, `<incomplete>` as INCOMPLETE (arp does not show other " +
		"states); MACs lower case; the device of `ip neigh show dev eth0` comes from the prompt; " +
		"prompts and banners name the node",
	Sniff: sniffNeigh,
	Parse: format.Records(readNeighbors, func(s *model.Snapshot, out []model.Neighbor) { s.Neighbors = append(s.Neighbors, out...) }, "neighbors"),
}

// Neighbors parses ARP and NDP tables:
//
//   - ip neigh, ip -s neigh and ip neigh show nud all:
//     "10.0.0.1 dev eth0 lladdr aa:bb:cc:dd:ee:ff router REACHABLE", with
//     the statistics of -s (ref, used, probes; iproute2 6.1 glues "probes"
//     to the used counters) skipped, no lladdr for INCOMPLETE and FAILED
//     entries, and no dev when the command named one (ip neigh show dev
//     eth0: the device is read from the prompt);
//   - arp -an (and arp -a): "? (10.0.0.1) at aa:bb:cc:dd:ee:ff [ether] on
//     eth0", PERM entries read as PERMANENT, PUB as the proxy flag,
//     <incomplete> as INCOMPLETE (arp does not tell FAILED from it);
//   - arp -n: the Address HWtype HWaddress Flags Mask Iface table, flag M
//     read as PERMANENT and P as proxy.
//
// States other than those are not printed by arp, and are left empty. MAC
// addresses are lower case. Shell prompts name the node of the lines below
// them, and so do node markers. A line that is none of these is reported
// with its position and the rest is read. name is used only in positions.
func Neighbors(r io.Reader, name string) ([]model.Neighbor, error) {
	return format.ReadAll(r, name, readNeighbors)
}

func readNeighbors(r io.Reader, src *format.File, errs *model.ErrorList) []model.Neighbor {
	var out []model.Neighbor
	var dev string // the device the command names
	text.ReadLines(r, src, errs, text.Hooks{Command: func(cmd string) { dev = neighCmdDev(cmd) }}, func(l *text.Line) {
		f := l.Fields()
		if f[0] == "Address" && len(f) >= 3 && f[1] == "HWtype" {
			return // arp -n header
		}
		var (
			n   model.Neighbor
			err error
		)
		switch {
		case len(f) >= 3 && arpNType(f[1]):
			n, err = arpNLine(f)
		case len(f) >= 2 && strings.HasPrefix(f[1], "(") && strings.HasSuffix(f[1], ")"):
			n, err = arpAnLine(f)
		default:
			n, err = ipNeighLine(f)
			if err == nil && n.Dev == "" {
				n.Dev = dev
			}
		}
		if l.Syntax(err) {
			n.Node, n.Pos = l.Node, l.Pos()
			out = append(out, n)
		}
	})
	return out
}

// neighCmdDev returns the device an ip neigh command names ("ip neigh show
// dev eth0"), "" when it names none.
func neighCmdDev(cmd string) string {
	f := strings.Fields(cmd)
	if text.Program(cmd) != "ip" {
		return ""
	}
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			return f[i+1]
		}
	}
	return ""
}

// neighStates are the NUD states ip neigh prints.
var neighStates = map[string]bool{
	"PERMANENT": true, "NOARP": true, "REACHABLE": true, "STALE": true, "DELAY": true,
	"PROBE": true, "FAILED": true, "INCOMPLETE": true, "NONE": true,
}

// neighFlags are the flags ip neigh prints as words.
var neighFlags = map[string]bool{
	"router": true, "proxy": true, "extern_learn": true, "offload": true, "managed": true,
}

// ipNeighLine reads "IP [dev DEV] [lladdr MAC] [router] [proxy] [ref N]
// [used A/B/C] [probes N] STATE".
func ipNeighLine(f []string) (model.Neighbor, error) {
	var n model.Neighbor
	ip, err := netip.ParseAddr(f[0])
	if err != nil {
		return n, fmt.Errorf("expected an ip neigh entry (\"10.0.0.1 dev eth0 lladdr aa:bb:cc:dd:ee:ff REACHABLE\") or an arp entry (\"? (10.0.0.1) at aa:bb:cc:dd:ee:ff [ether] on eth0\")")
	}
	n.IP = ip
	var states []string
	for i := 1; i < len(f); i++ {
		w := f[i]
		value := func() (string, error) {
			if i+1 >= len(f) {
				return "", fmt.Errorf("%s without a value", w)
			}
			i++
			return f[i], nil
		}
		switch {
		case w == "dev":
			if n.Dev, err = value(); err != nil {
				return n, err
			}
		case w == "lladdr":
			mac, err := value()
			if err != nil {
				return n, err
			}
			n.MAC = strings.ToLower(mac)
		case w == "ref" || w == "used" || w == "probes" || w == "protocol" || w == "nud":
			if _, err := value(); err != nil {
				return n, err
			}
			if w == "used" && strings.HasSuffix(f[i], "probes") {
				// iproute2 6.1 prints "used 0/60/0probes 4"
				if _, err := value(); err != nil {
					return n, err
				}
			}
		case neighStates[w]:
			states = append(states, w)
		case neighFlags[w]:
			n.Flags = append(n.Flags, w)
		default:
			return n, fmt.Errorf("unexpected %q in an ip neigh entry", w)
		}
	}
	n.State = strings.Join(states, " ")
	return n, nil
}

// arpAnLine reads "? (10.0.0.1) at aa:bb:cc:dd:ee:ff [ether] PERM on eth0"
// or "? (10.0.0.4) at <incomplete> on eth0" (arp -an; arp -a prints a host
// name instead of "?").
func arpAnLine(f []string) (model.Neighbor, error) {
	var n model.Neighbor
	const want = "expected an arp entry (\"? (10.0.0.1) at aa:bb:cc:dd:ee:ff [ether] on eth0\")"
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(f[1], "("), ")"))
	if err != nil || len(f) < 4 || f[2] != "at" {
		return n, fmt.Errorf("%s", want)
	}
	n.IP = ip
	switch mac := f[3]; {
	case mac == "<incomplete>":
		n.State = "INCOMPLETE"
	case strings.HasPrefix(mac, "<"):
		// "<from_interface>" and the like: no address
	default:
		n.MAC = strings.ToLower(mac)
	}
	for i := 4; i < len(f); i++ {
		switch w := f[i]; w {
		case "on":
			if i+1 >= len(f) {
				return n, fmt.Errorf("%s: \"on\" without an interface", want)
			}
			i++
			n.Dev = f[i]
		case "PERM", "permanent":
			n.State = "PERMANENT"
		case "PUB", "published":
			n.Flags = append(n.Flags, "proxy")
		case "netmask":
			i++
		}
		// hardware types ([ether]), AUTO, DONTPUB, TRAIL, ifscope: not kept
	}
	if n.Dev == "" {
		return n, fmt.Errorf("%s: no interface", want)
	}
	return n, nil
}

// arpNType reports the second column of an arp -n row: a hardware type, or
// "(incomplete)".
func arpNType(s string) bool {
	switch s {
	case "(incomplete)", "ether", "infiniband", "loopback", "ieee1394", "netrom", "ax25", "arcnet", "fddi", "tr":
		return true
	}
	return false
}

// arpNLine reads a row of arp -n: "10.0.0.1 ether aa:bb:cc:dd:ee:ff C eth0"
// or "10.0.0.4 (incomplete) eth0".
func arpNLine(f []string) (model.Neighbor, error) {
	var n model.Neighbor
	ip, err := netip.ParseAddr(f[0])
	if err != nil {
		return n, fmt.Errorf("expected an arp -n row (\"10.0.0.1 ether aa:bb:cc:dd:ee:ff C eth0\")")
	}
	n.IP = ip
	n.Dev = f[len(f)-1]
	if f[1] == "(incomplete)" {
		n.State = "INCOMPLETE"
		return n, nil
	}
	if len(f) < 5 {
		return n, fmt.Errorf("expected Address HWtype HWaddress Flags [Mask] Iface, got %d columns", len(f))
	}
	n.MAC = strings.ToLower(f[2])
	flags := f[3]
	if strings.Trim(flags, "CMP") != "" {
		return n, fmt.Errorf("arp flags %q: expected C, M or P", flags)
	}
	if strings.Contains(flags, "M") {
		n.State = "PERMANENT"
	}
	if strings.Contains(flags, "P") {
		n.Flags = append(n.Flags, "proxy")
	}
	return n, nil
}

func sniffNeigh(_ string, head []byte) int {
	strong := false
	isCmd := func(cmd string) bool {
		p := text.Program(cmd)
		return p == "arp" || p == "ip" && neighCmd(strings.Fields(cmd))
	}
	matched, total, _ := text.SniffLines(head, 200, isCmd, func(line string) text.Match {
		f := strings.Fields(line)
		var err error
		switch {
		case len(f) >= 3 && f[0] == "Address" && f[1] == "HWtype":
			strong = true
		case len(f) >= 3 && arpNType(f[1]):
			_, err = arpNLine(f)
		case len(f) >= 2 && strings.HasPrefix(f[1], "("):
			_, err = arpAnLine(f)
		default:
			// an ip neigh entry needs a dev, a lladdr or a state: a bare
			// address is no evidence
			var n model.Neighbor
			if n, err = ipNeighLine(f); err == nil && (len(f) < 2 || n.Dev == "" && n.State == "") {
				return text.Miss
			}
		}
		if err != nil {
			return text.Miss
		}
		return text.Hit
	})
	score := min(text.RatioScore(matched, total, 90), 90)
	if strong && score > 0 {
		score = max(score, 95)
	}
	return score
}

// neighCmd reports whether the words of an ip command show neighbors:
// "ip neigh", "ip -s n show", "ip -6 neighbour".
func neighCmd(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return w == "n" || strings.HasPrefix(w, "nei")
	}
	return false
}
