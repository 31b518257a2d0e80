package host

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// LinkFormat reads link listings: ip link, ip -d link and bridge link.
var LinkFormat = &format.Format{
	Name: "ip-link",
	Kind: model.KindLinks,
	Command: "ip link, ip -d link (the link's type and its bridge port settings), bridge link, " +
		"bridge -d link show (each port's hairpin, guard, learning ... settings)",
	Doc: "one record per link with its device (without `@peer`), MTU, MAC (`link/ether`), master (the bridge it is a port " +
		"of) and state (operational for ip link, the port's for bridge link); `ip -d link` adds its " +
		"type (vxlan with its id and dstport, geneve, wireguard, veth, bridge ...) and, for a bridge " +
		"port, its hairpin setting (`bridge_slave ... hairpin on`), which `bridge -d link show` " +
		"prints on the line below the port; prompts and banners name the node",
	Sniff: sniffLink,
	Parse: format.Records(readLinks, func(s *model.Snapshot, out []model.Link) { s.Links = append(s.Links, out...) }, "links"),
}

// Links parses link listings:
//
//   - ip link (ip -d link): a link line "7: veth1@if3: <BROADCAST,UP>
//     mtu 1450 qdisc noqueue master cni0 state UP mode DEFAULT ..." gives
//     the device, its MTU, master and state; with -d an indented line
//     "vxlan id 1 local 10.0.0.1 dev eth0 ... dstport 4789 ..." gives its
//     type (the first word), and "bridge_slave state forwarding ... hairpin
//     on ..." its bridge port settings;
//   - bridge link (bridge -d link show): "7: veth1@if3: <...> mtu 1500
//     master cni0 state forwarding priority 32 cost 2", and with -d the
//     line below, "hairpin on guard off ...".
//
// An indented "link/ether MAC" line gives the link's MAC. Other indented
// lines (altname, addrgenmode ...) are not kept. A line that is none of these is reported with its position and
// the rest is read. name is used only in positions.
func Links(r io.Reader, name string) ([]model.Link, error) {
	return format.ReadAll(r, name, readLinks)
}

func readLinks(r io.Reader, src *format.File, errs *model.ErrorList) []model.Link {
	return readLinkLines(r, src, errs, true)
}

// linksOfAddrs reads the link lines of ip addr: each link's MTU, master and
// state, the other lines left to the address reader.
func linksOfAddrs(r io.Reader, src *format.File) []model.Link {
	var errs model.ErrorList
	return readLinkLines(r, src, &errs, false)
}

// readLinkLines reads link lines and the lines indented below them; strict
// reports every other line, otherwise they are passed over.
func readLinkLines(r io.Reader, src *format.File, errs *model.ErrorList, strict bool) []model.Link {
	var out []model.Link
	inBlock := false
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { inBlock = false }}, func(l *text.Line) {
		t, f := l.Trimmed, l.Fields()
		if m := addrLinkRe.FindStringSubmatch(t); m != nil {
			lk, err := linkLine(m[3])
			if !l.Syntax(err) {
				inBlock = false
				return
			}
			lk.Node, lk.Dev, lk.Pos = l.Node, linkName(m[1]), l.Pos()
			out = append(out, lk)
			inBlock = true
			return
		}
		line := l.Text()
		if !strict && (!inBlock || (line[0] != ' ' && line[0] != '\t')) {
			inBlock = false
			return
		}
		if !inBlock || (line[0] != ' ' && line[0] != '\t') {
			l.Syntax(fmt.Errorf("expected a link line (\"2: eth0: <BROADCAST,UP> mtu 1500 ... state UP\") or a line indented below one"))
			inBlock = false
			return
		}
		lk := &out[len(out)-1]
		switch {
		case f[0] == "hairpin" || strings.HasSuffix(f[0], "_slave"):
			if h, ok := onOff(f, "hairpin"); ok {
				lk.Hairpin = &h
			}
		case f[0] == "link/ether" && len(f) > 1:
			lk.MAC = strings.ToLower(f[1])
		case linkKinds[f[0]] && lk.Kind == "":
			lk.Kind = f[0]
			lk.VNI, _ = strconv.Atoi(wordAfter(f, "id"))
			lk.Port, _ = strconv.Atoi(wordAfter(f, "dstport"))
		}
	})
	return out
}

// linkLine reads what follows the flags of a link line: "mtu 1500 qdisc
// noqueue master cni0 state UP mode DEFAULT group default qlen 1000".
func linkLine(rest string) (model.Link, error) {
	var lk model.Link
	f := strings.Fields(rest)
	if v := wordAfter(f, "mtu"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return lk, fmt.Errorf("expected a number after mtu, got %q", v)
		}
		lk.MTU = n
	}
	lk.Master = wordAfter(f, "master")
	lk.State = wordAfter(f, "state")
	return lk, nil
}

// wordAfter returns the word after key in f, "" when key is not there.
func wordAfter(f []string, key string) string {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}

// onOff reads "key on" or "key off" in f.
func onOff(f []string, key string) (bool, bool) {
	switch wordAfter(f, key) {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// linkKinds are the link types ip -d link prints first on a link's
// details line.
var linkKinds = map[string]bool{
	"vxlan": true, "geneve": true, "wireguard": true, "veth": true, "bridge": true, "bond": true,
	"ipip": true, "gre": true, "gretap": true, "ip6gre": true, "ip6tnl": true, "sit": true, "vlan": true,
	"macvlan": true, "macvtap": true, "ipvlan": true, "dummy": true, "tun": true, "vrf": true, "ifb": true,
	"openvswitch": true, "team": true, "erspan": true, "vti": true, "xfrm": true, "bareudp": true,
	"nlmon": true, "netkit": true,
}

func sniffLink(_ string, head []byte) int {
	links, details, inBlock := 0, 0, false
	isCmd := func(cmd string) bool {
		f := strings.Fields(cmd)
		switch text.Program(cmd) {
		case "ip":
			return linkCmd(f)
		case "bridge":
			return linkCmd(f)
		}
		return false
	}
	matched, total, _ := text.SniffLines(head, 200, isCmd, func(line string) text.Match {
		t := strings.TrimSpace(line)
		f := strings.Fields(t)
		indented := line[0] == ' ' || line[0] == '\t'
		switch {
		case addrLinkRe.MatchString(t):
			links, inBlock = links+1, true
			m := addrLinkRe.FindStringSubmatch(t)
			lf := strings.Fields(m[3])
			if wordAfter(lf, "mode") != "" || wordAfter(lf, "priority") != "" {
				details++
			}
			return text.Hit
		case inBlock && indented:
			switch {
			case f[0] == "inet" || f[0] == "inet6":
				details = -1 << 20 // addresses: ip addr's
				return text.Miss
			case f[0] == "hairpin" || strings.HasSuffix(f[0], "_slave") || linkKinds[f[0]]:
				details++
				return text.Hit
			}
			return text.Hit
		}
		inBlock = false
		return text.Miss
	})
	if links == 0 || details <= 0 {
		return 0
	}
	score := min(text.RatioScore(matched, total, 97), 97)
	if score >= 80 {
		score = 97 // above ip-addr, which reads link lines too
	}
	return score
}

// linkCmd reports whether the words of an ip or bridge command list
// links: "ip link", "ip -d l show", "bridge -d link show".
func linkCmd(f []string) bool {
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return w == "l" || strings.HasPrefix(w, "link")
	}
	return false
}
