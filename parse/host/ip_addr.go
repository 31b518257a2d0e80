package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// AddrFormat reads interface address listings: ip addr and its forms.
var AddrFormat = &format.Format{
	Name: "ip-addr",
	Kind: model.KindAddrs,
	Command: "ip addr, ip a, ip -4 addr, ip -6 addr, ip addr show dev eth0, ip -br addr, ip -o addr " +
		"(one line per address, no link state or MAC)",
	Doc: "one record per address with the link's device (without `@peer`), operational state and " +
		"MAC; scope, flags (secondary, dynamic, noprefixroute, tentative ...) and the IPv4 label " +
		"when it differs from the device (`eth0:vip`); VIPs on `kube-ipvs0` are ordinary " +
		"addresses; a `peer` address without a length is a host prefix; `-br` rows give no scope " +
		"or flags; each link line also gives the link's MTU, master and state (as ip link's would); prompts " +
		"and banners name the node",
	Sniff: sniffAddr,
	Parse: withLinks(format.Records(readAddrs, func(s *model.Snapshot, out []model.IfAddr) { s.Addrs = append(s.Addrs, out...) }, "addrs"),
		linksOfAddrs),
}

// withLinks makes a Parse that also adds the links links reads from the
// same input (ip addr's link lines give each link's MTU) to the snapshot,
// without counting them as records.
func withLinks(parse func(context.Context, io.Reader, *format.File, *model.Snapshot) (int, error),
	links func(io.Reader, *format.File) []model.Link) func(context.Context, io.Reader, *format.File, *model.Snapshot) (int, error) {
	return func(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return 0, fmt.Errorf("%s: reading: %w", src.Name, err)
		}
		n, err := parse(ctx, bytes.NewReader(b), src, snap)
		snap.Links = append(snap.Links, links(bytes.NewReader(b), src)...)
		return n, err
	}
}

// Addrs parses interface address listings:
//
//   - ip addr (ip a, ip -4 addr, ip -6 addr): a link line "3: eth0@if12:
//     <BROADCAST,UP,LOWER_UP> mtu 1500 ... state UP ..." names the device
//     (without its @peer) and its state, "link/ether MAC" its MAC, and each
//     "inet 10.0.0.1/24 brd ... scope global secondary eth0:1" or "inet6
//     fd00::1/64 scope global nodad" line is one address, with its scope,
//     its flags, and for IPv4 its label when it differs from the device;
//   - ip -br addr: "eth0@if12 UP 10.0.0.1/24 fe80::1/64" (no scope, no
//     flags);
//   - ip -o addr: one line per address, "2: eth0    inet 10.0.0.1/24 brd
//     ... scope global eth0\       valid_lft ..." (no link state, no MAC).
//
// An address without a prefix length (a "peer" address) is read as a host
// prefix. Shell prompts name the node of the lines below them, and so do
// node markers. A line that is none of these is reported with its position
// and the rest is read. name is used only in positions.
func Addrs(r io.Reader, name string) ([]model.IfAddr, error) {
	return format.ReadAll(r, name, readAddrs)
}

func readAddrs(r io.Reader, src *format.File, errs *model.ErrorList) []model.IfAddr {
	var (
		out     []model.IfAddr
		dev     string
		state   string
		mac     string
		inBlock bool
	)
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { inBlock = false }}, func(l *text.Line) {
		t, f := l.Trimmed, l.Fields()
		if m := addrLinkRe.FindStringSubmatch(t); m != nil {
			dev, state, mac, inBlock = linkName(m[1]), "", "", true
			lf := strings.Fields(m[3])
			for i := 0; i+1 < len(lf); i++ {
				if lf[i] == "state" {
					state = lf[i+1]
				}
			}
			return
		}
		if dev1, inet, ok := onelineAddr(t); ok { // ip -o addr
			inBlock = false
			a, err := inetLine(inet)
			if !l.Syntax(err) {
				return
			}
			a.Dev = linkName(dev1)
			if a.Label == a.Dev {
				a.Label = ""
			}
			a.Node, a.Pos = l.Node, l.Pos()
			out = append(out, a)
			return
		}
		line := l.Text()
		if inBlock && (line[0] == ' ' || line[0] == '\t') {
			switch {
			case strings.HasPrefix(f[0], "link/"):
				if len(f) >= 2 && f[0] != "link/none" {
					mac = strings.ToLower(f[1])
				}
			case f[0] == "inet" || f[0] == "inet6":
				a, err := inetLine(f)
				if !l.Syntax(err) {
					return
				}
				if a.Label == dev {
					a.Label = ""
				}
				a.Node, a.Dev, a.State, a.MAC, a.Pos = l.Node, dev, state, mac, l.Pos()
				out = append(out, a)
			}
			// valid_lft, altname, link-netnsid, vf, prog/xdp ...: not kept
			return
		}
		br, err := briefAddrLine(f)
		if !l.Syntax(err) {
			return
		}
		inBlock = false
		for _, a := range br {
			a.Node, a.Pos = l.Node, l.Pos()
			out = append(out, a)
		}
	})
	return out
}

// addrLinkRe matches the link line of ip addr: "3: eth0@if12: <FLAGS> ...".
var addrLinkRe = lazyre.New(`^\d+:\s+(\S+?):\s+<([A-Z0-9_,-]*)>(.*)$`)

// linkStates are the operational states ip prints.
var linkStates = map[string]bool{
	"UP": true, "DOWN": true, "UNKNOWN": true, "LOWERLAYERDOWN": true,
	"DORMANT": true, "NOTPRESENT": true, "TESTING": true,
}

// addrOnelineRe matches a line of ip -o addr: "2: eth0    inet
// 10.0.0.1/24 brd 10.0.0.255 scope global eth0\       valid_lft forever
// preferred_lft forever".
var addrOnelineRe = lazyre.New(`^\d+:\s+(\S+)\s+(inet6? .*)$`)

// onelineAddr splits a line of ip -o addr into its device and the fields
// of its inet or inet6 part (what ip addr prints on an indented line, up
// to the backslash that stands for the line break).
func onelineAddr(t string) (string, []string, bool) {
	m := addrOnelineRe.FindStringSubmatch(t)
	if m == nil {
		return "", nil, false
	}
	inet, _, _ := strings.Cut(m[2], "\\")
	return m[1], strings.Fields(inet), true
}

// linkName drops the "@peer" of "eth0@if12"; "@NONE" too.
func linkName(s string) string {
	if i := strings.IndexByte(s, '@'); i > 0 {
		return s[:i]
	}
	return s
}

// addrFlags are the address flags ip addr prints as words.
var addrFlags = map[string]bool{
	"secondary": true, "temporary": true, "dynamic": true, "deprecated": true, "tentative": true,
	"dadfailed": true, "nodad": true, "optimistic": true, "noprefixroute": true, "mngtmpaddr": true,
	"home": true, "autojoin": true, "stable-privacy": true, "permanent": true, "primary": true,
}

// inetLine reads "inet 10.0.0.1/24 [peer P] [brd B] scope S [flags] [label]"
// or "inet6 fd00::1/64 scope global [flags]".
func inetLine(f []string) (model.IfAddr, error) {
	var a model.IfAddr
	if len(f) < 2 {
		return a, fmt.Errorf("%s without an address", f[0])
	}
	p, err := parseIfPrefix(f[1])
	if err != nil {
		return a, fmt.Errorf("expected an address with its prefix length after %s (\"10.0.0.1/24\"), got %q", f[0], f[1])
	}
	a.Prefix = p
	for i := 2; i < len(f); i++ {
		w := f[i]
		switch {
		case w == "brd" || w == "peer" || w == "metric" || w == "proto":
			if i+1 >= len(f) {
				return a, fmt.Errorf("%s without a value", w)
			}
			i++
		case w == "scope":
			if i+1 >= len(f) {
				return a, fmt.Errorf("scope without a value")
			}
			i++
			a.Scope = f[i]
		case addrFlags[w]:
			a.Flags = append(a.Flags, w)
		case f[0] == "inet" && i == len(f)-1:
			a.Label = w
		default:
			return a, fmt.Errorf("unexpected %q in an %s line", w, f[0])
		}
	}
	return a, nil
}

// parseIfPrefix reads "10.0.0.1/24", or "10.0.0.1" as a host prefix.
func parseIfPrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// briefAddrLine reads a row of ip -br addr: "eth0@if12 UP 10.0.0.1/24 ...".
// A row without addresses gives none.
func briefAddrLine(f []string) ([]model.IfAddr, error) {
	const want = "expected an ip addr link line (\"2: eth0: <BROADCAST,UP> ... state UP\") or an ip -br addr row (\"eth0 UP 10.0.0.1/24\")"
	if len(f) < 2 || !linkStates[f[1]] {
		return nil, fmt.Errorf("%s", want)
	}
	var out []model.IfAddr
	for _, w := range f[2:] {
		p, err := netip.ParsePrefix(w)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an address with its prefix length", want, w)
		}
		out = append(out, model.IfAddr{Dev: linkName(f[0]), State: f[1], Prefix: p})
	}
	return out, nil
}

func sniffAddr(_ string, head []byte) int {
	links, inBlock := 0, false
	isCmd := func(cmd string) bool { return text.Program(cmd) == "ip" && addrCmd(strings.Fields(cmd)) }
	matched, total, _ := text.SniffLines(head, 200, isCmd, func(line string) text.Match {
		t := strings.TrimSpace(line)
		f := strings.Fields(t)
		indented := line[0] == ' ' || line[0] == '\t'
		if _, inet, ok := onelineAddr(t); ok {
			inBlock = false
			if _, err := inetLine(inet); err == nil {
				links++
				return text.Hit
			}
			return text.Miss
		}
		switch {
		case addrLinkRe.MatchString(t):
			links, inBlock = links+1, true
			return text.Hit
		case inBlock && indented:
			switch {
			case strings.HasPrefix(f[0], "link/"), f[0] == "valid_lft", f[0] == "altname":
				return text.Hit
			case f[0] == "inet" || f[0] == "inet6":
				if _, err := inetLine(f); err == nil {
					return text.Hit
				}
			}
		default:
			inBlock = false
			if _, err := briefAddrLine(f); err == nil {
				return text.Hit
			}
		}
		return text.Miss
	})
	score := min(text.RatioScore(matched, total, 90), 90)
	if links > 0 && score > 0 {
		score = max(score, 95)
	}
	return score
}

// addrCmd reports whether the words of an ip command show addresses: "ip
// addr", "ip -4 a", "ip -br address show".
func addrCmd(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return w == "a" || strings.HasPrefix(w, "addr")
	}
	return false
}
