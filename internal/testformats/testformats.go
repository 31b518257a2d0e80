// Package testformats holds small stand-in formats for tests of bundle
// handling, batch runs and diffs: they recognize a few command outputs by
// content and fill just enough of the model (node, position, a record
// count, Services, Endpoints, IPVS services, sysctls) to check where each
// file went. They are no parsers: the real ones live in package parse.
package testformats

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// All returns every stand-in format.
func All() []*parse.Format {
	return []*parse.Format{IPTablesSave, IPTablesList, NFT, SS, Sysctl, KubeJSON, IPAddr, IPRoute, IPVS}
}

func lines(r io.Reader, fn func(n int, line string)) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 4<<20)
	n := 0
	for s.Scan() {
		n++
		fn(n, strings.TrimSuffix(s.Text(), "\r"))
	}
	return s.Err()
}

// IPTablesSave stands in for iptables-save output.
var IPTablesSave = &parse.Format{
	Name: "test-iptables-save", Kind: model.KindNetfilter, Command: "iptables-save",
	Sniff: func(_ string, head []byte) int {
		if bytes.Contains(head, []byte("\nCOMMIT")) && (bytes.Contains(head, []byte("*nat")) || bytes.Contains(head, []byte("*filter"))) {
			return 60
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		rs := &model.Ruleset{Node: src.Node, Family: "ipv4", Format: "iptables-save", Pos: src.Pos(1)}
		var table *model.Table
		n := 0
		err := lines(r, func(ln int, l string) {
			switch {
			case strings.HasPrefix(l, "*"):
				table = &model.Table{Name: l[1:], Pos: src.Pos(ln)}
				rs.Tables = append(rs.Tables, table)
			case strings.HasPrefix(l, ":") && table != nil:
				f := strings.Fields(l[1:])
				c := &model.Chain{Name: f[0], Pos: src.Pos(ln)}
				if len(f) > 1 && f[1] != "-" {
					c.Policy = f[1]
				}
				table.Chains = append(table.Chains, c)
			case strings.HasPrefix(l, "-A ") && table != nil:
				f := strings.Fields(l)
				c := table.Chain(f[1])
				if c == nil {
					c = &model.Chain{Name: f[1], Pos: src.Pos(ln)}
					table.Chains = append(table.Chains, c)
				}
				rule := &model.Rule{Raw: l, Pos: src.Pos(ln)}
				for i := range f {
					if f[i] == "-j" && i+1 < len(f) {
						rule.Target = f[i+1]
					}
				}
				c.Rules = append(c.Rules, rule)
				n++
			}
		})
		snap.Netfilter = append(snap.Netfilter, rs)
		return n, err
	},
}

// IPTablesList stands in for iptables -L -n -v output.
var IPTablesList = &parse.Format{
	Name: "test-iptables-list", Kind: model.KindNetfilter, Command: "iptables -L -n -v",
	Sniff: func(_ string, head []byte) int {
		if bytes.HasPrefix(head, []byte("Chain ")) && bytes.Contains(head, []byte("target")) {
			return 50
		}
		return 0
	},
	Parse: countLines(func(l string) bool {
		return l != "" && !strings.HasPrefix(l, "Chain ") && !strings.Contains(l, "target")
	}),
}

// NFT stands in for nft list ruleset output.
var NFT = &parse.Format{
	Name: "test-nft", Kind: model.KindNetfilter, Command: "nft list ruleset",
	Sniff: func(_ string, head []byte) int {
		if regexp.MustCompile(`(?m)^table (ip|ip6|inet|arp|bridge|netdev) \S+ \{`).Match(head) {
			return 50
		}
		return 0
	},
	Parse: countLines(func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "chain ") }),
}

// SS stands in for ss output (any flags).
var SS = &parse.Format{
	Name: "test-ss", Kind: model.KindSockets, Command: "ss -tanp",
	Sniff: func(_ string, head []byte) int {
		first, _, _ := bytes.Cut(head, []byte("\n"))
		if (bytes.HasPrefix(first, []byte("Netid")) || bytes.HasPrefix(first, []byte("State"))) && bytes.Contains(first, []byte("Recv-Q")) {
			return 50
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		n := 0
		err := lines(r, func(ln int, l string) {
			f := strings.Fields(l)
			if len(f) < 6 || (f[0] != "tcp" && f[0] != "udp") {
				return
			}
			local, err1 := netip.ParseAddrPort(f[4])
			peer, _ := netip.ParseAddrPort(f[5])
			if err1 != nil {
				return
			}
			snap.Sockets = append(snap.Sockets, model.Socket{Node: src.Node, Proto: f[0], State: f[1], Local: local, Peer: peer, Pos: src.Pos(ln)})
			n++
		})
		return n, err
	},
}

var sysctlLine = regexp.MustCompile(`^([a-z/][\w.\-/]*) = ?(.*)$`)

// Sysctl stands in for sysctl -a output.
var Sysctl = &parse.Format{
	Name: "test-sysctl", Kind: model.KindSysctl, Command: "sysctl -a",
	Sniff: func(_ string, head []byte) int {
		first, _, _ := bytes.Cut(head, []byte("\n"))
		if sysctlLine.Match(bytes.TrimSpace(first)) {
			return 50
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		n := 0
		var errs model.ErrorList
		err := lines(r, func(ln int, l string) {
			if strings.TrimSpace(l) == "" {
				return
			}
			m := sysctlLine.FindStringSubmatch(l)
			if m == nil {
				errs.Addf(src.Pos(ln), l, "%w: expected \"name = value\"", parse.ErrSyntax)
				return
			}
			name := strings.ReplaceAll(strings.TrimPrefix(m[1], "/proc/sys/"), "/", ".")
			snap.Sysctls = append(snap.Sysctls, model.Sysctl{Node: src.Node, Name: name, Value: strings.Join(strings.Fields(m[2]), " "), Pos: src.Pos(ln)})
			n++
		})
		errs.Append(err)
		return n, errs.Err()
	},
}

// KubeJSON stands in for kubectl get -o json output: it reads Services,
// Endpoints, Pods and Nodes of a List (or a bare array, or one object) and
// counts the kinds.
var KubeJSON = &parse.Format{
	Name: "test-kube-json", Kind: model.KindKube, Command: "kubectl get -o json",
	Sniff: func(_ string, head []byte) int {
		t := bytes.TrimSpace(head)
		if len(t) > 0 && (t[0] == '{' || t[0] == '[') && bytes.Contains(t, []byte(`"kind"`)) && bytes.Contains(t, []byte(`"apiVersion"`)) {
			return 50
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return 0, err
		}
		var items []json.RawMessage
		t := bytes.TrimSpace(b)
		if len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(t, &items); err != nil {
				return 0, fmt.Errorf("%w: %v", parse.ErrSyntax, err)
			}
		} else {
			var list struct {
				Kind  string            `json:"kind"`
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(t, &list); err != nil {
				return 0, fmt.Errorf("%w: %v", parse.ErrSyntax, err)
			}
			if strings.HasSuffix(list.Kind, "List") {
				items = list.Items
			} else {
				items = []json.RawMessage{t}
			}
		}
		for i, raw := range items {
			var meta struct {
				Kind string `json:"kind"`
			}
			_ = json.Unmarshal(raw, &meta)
			if meta.Kind == "" {
				meta.Kind = "Unknown"
			}
			src.Count(meta.Kind, 1)
			pos := model.Pos{File: src.Name, Path: "items[" + strconv.Itoa(i) + "]"}
			s := model.Source{Pos: pos, Node: src.Node}
			switch meta.Kind {
			case "Service":
				var o model.Service
				if json.Unmarshal(raw, &o.Service) == nil {
					o.Source = s
					o.Source.Pos.Object = model.ObjectName("Service", o.Namespace, o.Name)
					snap.Kube.Services = append(snap.Kube.Services, o)
				}
			case "Endpoints":
				var o model.Endpoints
				if json.Unmarshal(raw, &o.Endpoints) == nil {
					o.Source = s
					o.Source.Pos.Object = model.ObjectName("Endpoints", o.Namespace, o.Name)
					snap.Kube.Endpoints = append(snap.Kube.Endpoints, o)
				}
			case "Pod":
				var o model.Pod
				if json.Unmarshal(raw, &o.Pod) == nil {
					o.Source = s
					snap.Kube.Pods = append(snap.Kube.Pods, o)
				}
			case "Node":
				var o model.Node
				if json.Unmarshal(raw, &o.Node) == nil {
					o.Source = s
					snap.Kube.Nodes = append(snap.Kube.Nodes, o)
				}
			}
		}
		return len(items), nil
	},
}

// IPAddr stands in for ip addr show output.
var IPAddr = &parse.Format{
	Name: "test-ip-addr", Kind: model.KindAddrs, Command: "ip addr show",
	Sniff: func(_ string, head []byte) int {
		if regexp.MustCompile(`^\d+: \S+: <`).Match(head) {
			return 40
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		n := 0
		dev := ""
		err := lines(r, func(ln int, l string) {
			if m := regexp.MustCompile(`^\d+: ([^:@]+)`).FindStringSubmatch(l); m != nil {
				dev = m[1]
				return
			}
			f := strings.Fields(l)
			if len(f) >= 2 && (f[0] == "inet" || f[0] == "inet6") {
				if p, err := netip.ParsePrefix(f[1]); err == nil {
					snap.Addrs = append(snap.Addrs, model.IfAddr{Node: src.Node, Dev: dev, Prefix: p, Pos: src.Pos(ln)})
					n++
				}
			}
		})
		return n, err
	},
}

var routeLine = regexp.MustCompile(`^(default|local|broadcast|unreachable|multicast|[0-9a-f.:]+(/\d+)?) .*\b(dev|table|via)\b`)

// IPRoute stands in for ip route output.
var IPRoute = &parse.Format{
	Name: "test-ip-route", Kind: model.KindRoutes, Command: "ip route show",
	Sniff: func(_ string, head []byte) int {
		first, _, _ := bytes.Cut(head, []byte("\n"))
		if routeLine.Match(first) {
			return 30
		}
		return 0
	},
	Parse: countLines(func(l string) bool { return routeLine.MatchString(l) }),
}

var (
	ipvsService = regexp.MustCompile(`^(TCP|UDP|SCTP)\s+(\S+)\s+(\S+)`)
	ipvsReal    = regexp.MustCompile(`^\s+->\s+(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)`)
)

// IPVS stands in for ipvsadm -Ln output.
var IPVS = &parse.Format{
	Name: "test-ipvsadm", Kind: model.KindIPVS, Command: "ipvsadm -Ln",
	Sniff: func(_ string, head []byte) int {
		if bytes.HasPrefix(head, []byte("IP Virtual Server version")) {
			return 60
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		n := 0
		var cur *model.IPVSService
		flush := func() {
			if cur != nil {
				snap.IPVS = append(snap.IPVS, *cur)
				cur = nil
			}
		}
		err := lines(r, func(ln int, l string) {
			if m := ipvsService.FindStringSubmatch(l); m != nil {
				flush()
				ap, err := netip.ParseAddrPort(m[2])
				if err != nil {
					return
				}
				cur = &model.IPVSService{Node: src.Node, Proto: m[1], Addr: ap, Scheduler: m[3], Reals: []model.IPVSReal{}, Pos: src.Pos(ln)}
				n++
				return
			}
			if m := ipvsReal.FindStringSubmatch(l); m != nil && cur != nil {
				ap, err := netip.ParseAddrPort(m[1])
				if err != nil {
					return
				}
				w, _ := strconv.Atoi(m[3])
				a, _ := strconv.Atoi(m[4])
				in, _ := strconv.Atoi(m[5])
				cur.Reals = append(cur.Reals, model.IPVSReal{Addr: ap, Forward: m[2], Weight: w, ActiveConn: a, InactConn: in, Pos: src.Pos(ln)})
			}
		})
		flush()
		return n, err
	},
}

func countLines(keep func(string) bool) func(context.Context, io.Reader, *parse.File, *model.Snapshot) (int, error) {
	return func(ctx context.Context, r io.Reader, src *parse.File, snap *model.Snapshot) (int, error) {
		n := 0
		err := lines(r, func(_ int, l string) {
			if keep(l) {
				n++
			}
		})
		return n, err
	}
}
