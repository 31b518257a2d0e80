package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// iproute2's JSON output (ip -j, also pretty-printed with -p): the same
// records as its text, read through the text readers so that both give the
// same model.

// ipJSONDoc is what docs/inputs.md says of the ip -j formats.
const ipJSONDoc = "each entry read through the text reader of the same command, so JSON and text give the " +
	"same records (held equal on real outputs taken one after the other); positions are the " +
	"entry's line and number (`ip-neigh.json:1 (entry 3)`), as `ip -j` prints everything on " +
	"one line; an entry of another kind, or broken JSON, is an error at its position"

// NeighJSONFormat reads ip -j neigh.
var NeighJSONFormat = &format.Format{
	Name:    "neigh-json",
	Kind:    model.KindNeighbors,
	Command: "ip -j neigh, also pretty-printed with -p",
	Doc:     ipJSONDoc,
	Sniff:   sniffIPJSON(isNeighEntry),
	Parse: format.Records(readNeighborsJSON, func(s *model.Snapshot, out []model.Neighbor) {
		s.Neighbors = append(s.Neighbors, out...)
	}, "neighbors"),
}

// AddrJSONFormat reads ip -j addr.
var AddrJSONFormat = &format.Format{
	Name:    "ip-addr-json",
	Kind:    model.KindAddrs,
	Command: "ip -j addr, also pretty-printed with -p",
	Doc:     ipJSONDoc,
	Sniff:   sniffIPJSON(isAddrEntry),
	Parse: withLinks(format.Records(readAddrsJSON, func(s *model.Snapshot, out []model.IfAddr) { s.Addrs = append(s.Addrs, out...) }, "addrs"),
		linksOfAddrsJSON),
}

// RouteJSONFormat reads ip -j route.
var RouteJSONFormat = &format.Format{
	Name:    "ip-route-json",
	Kind:    model.KindRoutes,
	Command: "ip -j route (-6, show table all), also pretty-printed with -p",
	Doc:     ipJSONDoc,
	Sniff:   sniffIPJSON(isRouteEntry),
	Parse:   format.Records(readRoutesJSON, func(s *model.Snapshot, out []model.Route) { s.Routes = append(s.Routes, out...) }, "routes"),
}

// NeighborsJSON parses ip -j neigh: each entry ({"dst": ..., "dev": ...,
// "lladdr": ..., "state": [...]}, flags as keys) as ip neigh's text line
// would be. An entry that is not a neighbor, or JSON that is not an array
// of objects, is reported with its position (the entry's line and its
// number) and the rest is read. name is used only in positions.
func NeighborsJSON(r io.Reader, name string) ([]model.Neighbor, error) {
	return format.ReadAll(r, name, readNeighborsJSON)
}

// AddrsJSON parses ip -j addr: one address per element of each link's
// addr_info, with the link's name, operational state and MAC, as ip addr's
// text gives them.
func AddrsJSON(r io.Reader, name string) ([]model.IfAddr, error) {
	return format.ReadAll(r, name, readAddrsJSON)
}

// RoutesJSON parses ip -j route, multipath nexthops included, as ip
// route's text would be.
func RoutesJSON(r io.Reader, name string) ([]model.Route, error) {
	return format.ReadAll(r, name, readRoutesJSON)
}

// The flag words ip prints, in order, for reading them from JSON keys the
// same way each time.
var (
	neighFlagNames = slices.Sorted(maps.Keys(neighFlags))
	addrFlagNames  = slices.Sorted(maps.Keys(addrFlags))
)

// ipEntry is one object of ip's JSON output and where it starts.
type ipEntry struct {
	f   map[string]json.RawMessage
	pos model.Pos
}

func (e ipEntry) has(k string) bool { _, ok := e.f[k]; return ok }

// str returns the string (or number) value of k, "" when absent or null.
func (e ipEntry) str(k string) string {
	raw, ok := e.f[k]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// strs returns the string array value of k.
func (e ipEntry) strs(k string) []string {
	var out []string
	if raw, ok := e.f[k]; ok {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

// isTrue reports whether k is present as true.
func (e ipEntry) isTrue(k string) bool {
	var b bool
	raw, ok := e.f[k]
	return ok && json.Unmarshal(raw, &b) == nil && b
}

func isAddrEntry(e ipEntry) bool { return e.has("ifname") && e.has("addr_info") }

func isNeighEntry(e ipEntry) bool {
	return e.has("dst") && (e.has("state") || e.has("lladdr")) &&
		!e.has("gateway") && !e.has("protocol") && !e.has("nexthops") && !e.has("prefsrc") && !e.has("type")
}

func isRouteEntry(e ipEntry) bool { return e.has("dst") && !isNeighEntry(e) }

// ipEntries reads the array of objects ip -j prints, each with the line it
// starts on and its number as position. A syntax error ends the reading,
// reported at its line.
func ipEntries(r io.Reader, name string, errs *model.ErrorList) []ipEntry {
	b, err := io.ReadAll(r)
	if err != nil {
		errs.Addf(model.Pos{File: name}, "", "reading: %w", err)
		return nil
	}
	// lineAt counts lines from the last offset asked for, as offsets come
	// in increasing order but for errors.
	lastOff, lastLine := 0, 1
	lineAt := func(off int64) int {
		o := min(int(off), len(b))
		if o < lastOff {
			lastOff, lastLine = 0, 1
		}
		lastLine += bytes.Count(b[lastOff:o], []byte("\n"))
		lastOff = o
		return lastLine
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		errs.Addf(model.Pos{File: name, Line: lineAt(dec.InputOffset())}, "", "%w: expected the JSON array ip -j prints", format.ErrSyntax)
		return nil
	}
	var out []ipEntry
	for n := 1; dec.More(); n++ {
		off := dec.InputOffset()
		for off < int64(len(b)) && (b[off] == ',' || b[off] == ' ' || b[off] == '\n' || b[off] == '\t' || b[off] == '\r') {
			off++
		}
		pos := model.Pos{File: name, Line: lineAt(off), Object: fmt.Sprintf("entry %d", n)}
		var e ipEntry
		if err := dec.Decode(&e.f); err != nil {
			line := pos.Line
			var se *json.SyntaxError
			switch {
			case errors.As(err, &se):
				line = lineAt(se.Offset)
			case errors.Is(err, io.ErrUnexpectedEOF):
				line = lineAt(int64(len(bytes.TrimRight(b, "\r\n")))) // the text ends inside the entry
			}
			errs.Addf(model.Pos{File: name, Line: line}, "", "%w: entry %d: %v", format.ErrSyntax, n, err)
			return out
		}
		e.pos = pos
		out = append(out, e)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		// ip -j prints one array: text that stops before its ] was cut.
		errs.Addf(model.Pos{File: name, Line: lineAt(int64(len(bytes.TrimRight(b, "\r\n"))))}, "",
			"%w: the JSON array has no closing ]: the text ends after entry %d", format.ErrTruncated, len(out))
	}
	return out
}

// ipEntriesOf returns the entries of r that is says are of the kind
// wanted; each other entry is an error saying what was expected (want).
func ipEntriesOf(r io.Reader, src *format.Source, errs *model.ErrorList, is func(ipEntry) bool, want string) []ipEntry {
	var out []ipEntry
	for _, e := range ipEntries(r, src.Name, errs) {
		if !is(e) {
			errs.Addf(e.pos, "", "%w: expected %s", format.ErrSyntax, want)
			continue
		}
		out = append(out, e)
	}
	return out
}

func readNeighborsJSON(r io.Reader, src *format.Source, errs *model.ErrorList) []model.Neighbor {
	var out []model.Neighbor
	for _, e := range ipEntriesOf(r, src, errs, isNeighEntry, "an ip -j neigh entry ({\"dst\": ..., \"dev\": ..., \"state\": [...]})") {
		f := []string{e.str("dst")}
		if d := e.str("dev"); d != "" {
			f = append(f, "dev", d)
		}
		if mac := e.str("lladdr"); mac != "" {
			f = append(f, "lladdr", mac)
		}
		for _, flag := range neighFlagNames {
			if e.has(flag) {
				f = append(f, flag)
			}
		}
		f = append(f, e.strs("state")...)
		n, err := ipNeighLine(f)
		if err != nil {
			errs.Addf(e.pos, "", "%w: %v", format.ErrSyntax, err)
			continue
		}
		n.Node, n.Pos = src.Node, e.pos
		out = append(out, n)
	}
	return out
}

func readAddrsJSON(r io.Reader, src *format.Source, errs *model.ErrorList) []model.IfAddr {
	var out []model.IfAddr
	for _, e := range ipEntriesOf(r, src, errs, isAddrEntry, "an ip -j addr entry ({\"ifname\": ..., \"addr_info\": [...]})") {
		dev := linkName(e.str("ifname"))
		mac := ""
		if e.str("link_type") != "none" {
			mac = strings.ToLower(e.str("address"))
		}
		var infos []map[string]json.RawMessage
		if err := json.Unmarshal(e.f["addr_info"], &infos); err != nil {
			errs.Addf(e.pos, "", "%w: addr_info is not a list of addresses", format.ErrSyntax)
			continue
		}
		for _, raw := range infos {
			info := ipEntry{f: raw}
			f := []string{info.str("family"), info.str("local") + "/" + info.str("prefixlen")}
			if sc := info.str("scope"); sc != "" {
				f = append(f, "scope", sc)
			}
			for _, flag := range addrFlagNames {
				if info.isTrue(flag) {
					f = append(f, flag)
				}
			}
			if l := info.str("label"); l != "" && f[0] == "inet" {
				f = append(f, l)
			}
			if f[0] != "inet" && f[0] != "inet6" {
				continue // other families (mpls ...) carry no IP address
			}
			a, err := inetLine(f)
			if err != nil {
				errs.Addf(e.pos, "", "%w: %v", format.ErrSyntax, err)
				continue
			}
			if a.Label == dev {
				a.Label = ""
			}
			a.Node, a.Dev, a.State, a.MAC, a.Pos = src.Node, dev, e.str("operstate"), mac, e.pos
			out = append(out, a)
		}
	}
	return out
}

func readRoutesJSON(r io.Reader, src *format.Source, errs *model.ErrorList) []model.Route {
	var out []model.Route
	cmdV6 := routeCmdV6(src.Command)
	for _, e := range ipEntriesOf(r, src, errs, isRouteEntry, "an ip -j route entry ({\"dst\": ..., \"gateway\": ..., \"dev\": ...})") {
		var f []string
		if t := e.str("type"); t != "" {
			f = append(f, t)
		}
		dst, gw := e.str("dst"), e.str("gateway")
		f = append(f, dst)
		for _, kv := range [][2]string{{"gateway", "via"}, {"dev", "dev"}, {"table", "table"}, {"protocol", "proto"},
			{"scope", "scope"}, {"prefsrc", "src"}, {"metric", "metric"}} {
			if v := e.str(kv[0]); v != "" {
				f = append(f, kv[1], v)
			}
		}
		rt, err := routeLine(f, cmdV6 || strings.Contains(gw, ":") || strings.Contains(dst, ":"))
		if err != nil {
			errs.Addf(e.pos, "", "%w: %v", format.ErrSyntax, err)
			continue
		}
		var hops []map[string]json.RawMessage
		if raw, ok := e.f["nexthops"]; ok {
			if err := json.Unmarshal(raw, &hops); err != nil {
				errs.Addf(e.pos, "", "%w: nexthops is not a list", format.ErrSyntax)
				continue
			}
		}
		bad := false
		for _, raw := range hops {
			h := ipEntry{f: raw}
			hf := []string{"nexthop"}
			for _, kv := range [][2]string{{"gateway", "via"}, {"dev", "dev"}, {"weight", "weight"}} {
				if v := h.str(kv[0]); v != "" {
					hf = append(hf, kv[1], v)
				}
			}
			nh, err := nexthopLine(hf)
			if err != nil {
				errs.Addf(e.pos, "", "%w: %v", format.ErrSyntax, err)
				bad = true
				break
			}
			rt.Nexthops = append(rt.Nexthops, nh)
			rt.Raw += " " + strings.Join(hf, " ")
		}
		if bad {
			continue
		}
		rt.Node, rt.Pos = src.Node, e.pos
		out = append(out, rt)
	}
	return out
}

// sniffIPJSON recognizes ip -j output whose first entry is of the kind
// that is tells.
func sniffIPJSON(is func(ipEntry) bool) func(string, []byte) int {
	return func(_ string, head []byte) int {
		t := bytes.TrimLeft(head, " \t\r\n")
		if !bytes.HasPrefix(t, []byte("[")) {
			return 0
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') || !dec.More() {
			return 0
		}
		var e ipEntry
		if dec.Decode(&e.f) != nil || e.has("kind") || e.has("apiVersion") || !is(e) {
			return 0
		}
		return 95
	}
}
