package host

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// RouteFormat reads routing tables: ip route.
var RouteFormat = &format.Format{
	Name:    "ip-route",
	Kind:    model.KindRoutes,
	Command: "ip route, ip r, ip -6 route, ip route show table all",
	Doc: "type (local, broadcast, blackhole, unreachable, prohibit, throw, multicast; \"\" for " +
		"unicast), destination (`default` is `0.0.0.0/0` or `::/0` by gateway, source, nexthops " +
		"or `-6`; a bare address is a host route), via, dev, src, table, proto, scope, metric; " +
		"the indented `nexthop` lines of a multipath route with their weights; other attributes " +
		"(pref, expires, mtu, linkdown, onlink ...) stay in the raw line; prompts and banners " +
		"name the node",
	Sniff: sniffRoute,
	Parse: format.Records(readRoutes, func(s *model.Snapshot, out []model.Route) { s.Routes = append(s.Routes, out...) }, "routes"),
}

// Routes parses routing tables printed by ip route, ip -6 route and ip
// route show table all: "[TYPE] DST [via GW] [dev DEV] [table T] [proto P]
// [scope S] [src A] [metric N] [flags]", where DST is "default", a prefix,
// or an address (a host route). Types other than unicast (local,
// broadcast, blackhole, unreachable, prohibit, throw, multicast ...) are
// kept in Type. The indented "nexthop via GW dev DEV weight W" lines of a
// multipath route are its Nexthops. A default route is IPv4 unless its
// gateway, its source, its nexthops or the command (ip -6 route) say IPv6.
// Route attributes that are not kept (pref, expires, mtu, hoplimit,
// linkdown, onlink ...) stay in Raw. Shell prompts name the node of the
// lines below them, and so do node markers. A line that is none of these is
// reported with its position and the rest is read. name is used only in
// positions.
func Routes(r io.Reader, name string) ([]model.Route, error) {
	return format.ReadAll(r, name, readRoutes)
}

func readRoutes(r io.Reader, src *format.File, errs *model.ErrorList) []model.Route {
	var out []model.Route
	var v6 bool // the command lists IPv6 routes
	last := -1  // index in out of the route nexthop lines belong to
	hooks := text.Hooks{
		Command: func(cmd string) { v6 = routeCmdV6(cmd) },
		Prompt:  func(*text.Line, string) { last = -1 },
	}
	text.ReadLines(r, src, errs, hooks, func(l *text.Line) {
		f := l.Fields()
		if f[0] == "cache" && last >= 0 {
			return // ip route get's cache line under its route ("cache <local>", "cache expires 590sec mtu 1400")
		}
		if f[0] == "nexthop" {
			if last < 0 {
				l.Errorf("%w: a nexthop line without the route it belongs to", format.ErrSyntax)
				return
			}
			nh, err := nexthopLine(f)
			if !l.Syntax(err) {
				return
			}
			rt := &out[last]
			rt.Nexthops = append(rt.Nexthops, nh)
			rt.Raw += " " + strings.Join(f, " ")
			if rt.Dst.Bits() == 0 && rt.Dst.Addr().Is4() && nh.Via.Is6() {
				rt.Dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
			}
			return
		}
		rt, err := routeLine(f, v6)
		if !l.Syntax(err) {
			last = -1
			return
		}
		rt.Node, rt.Pos = l.Node, l.Pos()
		out = append(out, rt)
		last = len(out) - 1
	})
	return out
}

// routeCmdV6 reports whether an ip command lists IPv6 routes (ip -6 route).
func routeCmdV6(cmd string) bool {
	if text.Program(cmd) != "ip" {
		return false
	}
	for _, w := range strings.Fields(cmd) {
		if w == "-6" || w == "-family=inet6" {
			return true
		}
	}
	return false
}

// routeTypes are the route types ip route prints before the destination.
var routeTypes = map[string]bool{
	"unicast": true, "local": true, "broadcast": true, "multicast": true, "blackhole": true,
	"unreachable": true, "prohibit": true, "throw": true, "nat": true, "anycast": true,
}

// routeKeys are the route attributes printed as "key value" that are not
// kept.
var routeKeys = map[string]bool{
	"pref": true, "expires": true, "mtu": true, "advmss": true, "rtt": true, "rttvar": true,
	"reordering": true, "window": true, "cwnd": true, "initcwnd": true, "initrwnd": true,
	"ssthresh": true, "realms": true, "rto_min": true, "hoplimit": true, "features": true,
	"quickack": true, "congctl": true, "fastopen_no_cookie": true, "error": true, "nhid": true,
	"tos": true, "dsfield": true, "from": true, "iif": true, "uid": true, "cache": true,
}

// routeWords are the route flags ip route prints as words.
var routeWords = map[string]bool{
	"linkdown": true, "onlink": true, "dead": true, "pervasive": true, "offload": true,
	"trap": true, "rt_offload": true, "rt_trap": true, "rt_offload_failed": true,
	"notify": true, "lock": true,
}

// routeLine reads one route. v6 says a default route is IPv6 when nothing
// on the line says which it is.
func routeLine(f []string, v6 bool) (model.Route, error) {
	rt := model.Route{Raw: strings.Join(f, " ")}
	i := 0
	if routeTypes[f[0]] {
		rt.Type = f[0]
		if rt.Type == "unicast" {
			rt.Type = ""
		}
		i++
	}
	if i >= len(f) {
		return rt, fmt.Errorf("route type %s without a destination", f[0])
	}
	dst := f[i]
	isDefault := dst == "default"
	if !isDefault {
		p, err := parseIfPrefix(dst)
		if err != nil {
			return rt, fmt.Errorf("expected a route (\"default via 10.0.0.1 dev eth0\", \"10.0.0.0/24 dev eth0 scope link\"), got %q as destination", dst)
		}
		rt.Dst = p
	}
	for i++; i < len(f); i++ {
		w := f[i]
		value := func() (string, error) {
			if i+1 >= len(f) {
				return "", fmt.Errorf("%s without a value", w)
			}
			i++
			return f[i], nil
		}
		addr := func() (netip.Addr, error) {
			v, err := value()
			if err != nil {
				return netip.Addr{}, err
			}
			a, err := netip.ParseAddr(v)
			if err != nil {
				return a, fmt.Errorf("%s %q is not an address", w, v)
			}
			return a, nil
		}
		var err error
		switch {
		case w == "via":
			if i+2 < len(f) && (f[i+1] == "inet" || f[i+1] == "inet6") {
				i++ // "via inet6 fe80::1" of IPv4 routes over IPv6 gateways
			}
			rt.Via, err = addr()
		case w == "src":
			rt.Src, err = addr()
		case w == "dev":
			rt.Dev, err = value()
		case w == "table":
			rt.Table, err = value()
		case w == "proto":
			rt.Proto, err = value()
		case w == "scope":
			rt.Scope, err = value()
		case w == "metric":
			var v string
			if v, err = value(); err == nil {
				if rt.Metric, err = strconv.Atoi(v); err != nil {
					err = fmt.Errorf("metric %q is not a number", v)
				}
			}
		case routeKeys[w]:
			_, err = value()
		case routeWords[w]:
		default:
			err = fmt.Errorf("unexpected %q in a route", w)
		}
		if err != nil {
			return rt, err
		}
	}
	if isDefault {
		six := v6
		if rt.Via.IsValid() {
			six = rt.Via.Is6() && !rt.Via.Is4In6()
		} else if rt.Src.IsValid() {
			six = rt.Src.Is6()
		}
		if six {
			rt.Dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		} else {
			rt.Dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		}
	}
	return rt, nil
}

// nexthopLine reads "nexthop via GW dev DEV weight W [flags]".
func nexthopLine(f []string) (model.RouteNexthop, error) {
	var nh model.RouteNexthop
	for i := 1; i < len(f); i++ {
		w := f[i]
		if routeWords[w] {
			continue
		}
		if i+1 >= len(f) {
			return nh, fmt.Errorf("%s without a value in a nexthop line", w)
		}
		i++
		v := f[i]
		switch w {
		case "via":
			if (v == "inet" || v == "inet6") && i+1 < len(f) {
				i++
				v = f[i]
			}
			a, err := netip.ParseAddr(v)
			if err != nil {
				return nh, fmt.Errorf("nexthop via %q is not an address", v)
			}
			nh.Via = a
		case "dev":
			nh.Dev = v
		case "weight":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nh, fmt.Errorf("nexthop weight %q is not a number", v)
			}
			nh.Weight = n
		case "realms", "encap":
		default:
			return nh, fmt.Errorf("unexpected %q in a nexthop line (\"nexthop via 10.0.0.1 dev eth0 weight 1\")", w)
		}
	}
	return nh, nil
}

func sniffRoute(_ string, head []byte) int {
	isCmd := func(cmd string) bool { return text.Program(cmd) == "ip" && routeCmd(strings.Fields(cmd)) }
	matched, total, _ := text.SniffLines(head, 200, isCmd, func(line string) text.Match {
		f := strings.Fields(line)
		if f[0] == "nexthop" {
			if _, err := nexthopLine(f); err == nil && len(f) >= 3 {
				return text.Hit
			}
			return text.Miss
		}
		// a route needs a type, a dev, a via or a default: a bare
		// address or prefix is no evidence
		rt, err := routeLine(f, false)
		switch {
		case err == nil && (rt.Type != "" || rt.Dev != "" || rt.Via.IsValid() || f[0] == "default") && (len(f) >= 2 || routeTypes[f[0]]):
			return text.Hit
		case err == nil && len(f) == 1:
			return text.Skip // the destination line of a multipath route
		}
		return text.Miss
	})
	return min(text.RatioScore(matched, total, 90), 90)
}

// routeCmd reports whether the words of an ip command show routes: "ip
// route", "ip -6 r", "ip ro show table all".
func routeCmd(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return w == "r" || strings.HasPrefix(w, "ro")
	}
	return false
}
