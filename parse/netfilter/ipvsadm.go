package netfilter

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// IPVSadmFormat reads IPVS virtual service tables.
var IPVSadmFormat = &format.Format{
	Name: "ipvsadm",
	Kind: model.KindIPVS,
	Command: "ipvsadm -Ln, --stats, --rate, --thresholds, --persistent-conn, ipvsadm -Sn, ipvsadm -Lnc" +
		" (the connection table), and service lines cut out with grep",
	Doc: "several listings in one file merge into one record per virtual service (counters from " +
		"`--stats`/`--rate` attached); prompts (`# ipvsadm -l -n | grep TCP`) are skipped; " +
		"K/M/G/T suffixes of un-`--exact` counters are read as multiples of 1000; without `-n`, " +
		"port names are resolved through /etc/services and IANA names, and what cannot be " +
		"(host names, unknown ports) is 0 with a note on the record and one warning for the file",
	Sniff: sniffIPVSadm,
	Parse: func(_ context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		svcs, conns := readIPVSadmAll(r, src.Name, src.Node, &errs)
		snap.IPVS = append(snap.IPVS, svcs...)
		snap.IPVSConns = append(snap.IPVSConns, conns...)
		src.Count("services", len(svcs))
		if len(conns) > 0 {
			src.Count("connections", len(conns))
		}
		return len(svcs) + len(conns), errs.Err()
	},
}

func sniffIPVSadm(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	lines := text.HeadLines(head, 200)
	matched, total := 0, 0
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "IP Virtual Server version") || strings.HasPrefix(t, "IPVS connection entries") {
			return 100
		}
		cmd, ok := text.HeadCommand(i, line)
		if ok {
			if strings.Contains(cmd, "ipvsadm") && !strings.Contains(cmd, "--timeout") { // --timeout: ipvsadm-timeout's
				matched += 3
			}
			continue
		}
		total++
		f := strings.Fields(t)
		if _, ok := ipvsServiceLine(f); ok || strings.HasPrefix(t, "-> ") {
			matched++
		} else if len(f) >= 3 && (f[0] == "TCP" || f[0] == "UDP" || f[0] == "SCTP") && ipvsNamedOK(f[1]) {
			matched++ // ipvsadm without -n
		} else if ipvsSaveLike(t) {
			matched++
		}
	}
	if total == 0 {
		return 0
	}
	return text.RatioScore(matched, total, 90)
}

// ipvsSaveLike tells `ipvsadm -Sn` lines ("-A -t 10.96.0.1:443 -s rr")
// from iptables rules ("-A KUBE-SERVICES ...").
func ipvsSaveLike(t string) bool {
	f := strings.Fields(t)
	if len(f) < 3 || (f[0] != "-A" && f[0] != "-a") {
		return false
	}
	switch f[1] {
	case "-t", "-u", "-f", "--tcp-service", "--udp-service", "--fwmark-service", "--sctp-service":
		return true
	}
	return false
}

// IPVSadm parses `ipvsadm -Ln` listings: the plain form, --stats and
// --rate (counters per service and real server), --thresholds and
// --persistent-conn columns, the save form of `ipvsadm -Sn`, and service
// lines cut out with grep ("TCP 169.254.20.10:20869 rr"). Several listings
// in one file (as log collectors write them, one command after another) are
// merged: each virtual service is reported once, with the position of its
// first line. Prompt lines ("# ipvsadm -Ln") and headers are skipped; any
// other line is reported with its position and the rest is read.
func IPVSadm(r io.Reader, name string) ([]model.IPVSService, error) {
	var errs model.ErrorList
	out := readIPVSadm(r, name, "", &errs)
	return out, errs.Err()
}

type ipvsMode int

const (
	ipvsPlain ipvsMode = iota
	ipvsStats
	ipvsRate
	ipvsThresholds
	ipvsPersist
	ipvsConns // ipvsadm -Lnc: the connection table
)

func readIPVSadm(r io.Reader, name, node string, errs *model.ErrorList) []model.IPVSService {
	svcs, _ := readIPVSadmAll(r, name, node, errs)
	return svcs
}

// IPVSConns parses the connection table of `ipvsadm -Lnc` ("IPVS
// connection entries", then "pro expire state source virtual destination"
// rows); the listing may sit in a file among other ipvsadm listings.
func IPVSConns(r io.Reader, name string) ([]model.IPVSConn, error) {
	var errs model.ErrorList
	_, conns := readIPVSadmAll(r, name, "", &errs)
	return conns, errs.Err()
}

func readIPVSadmAll(r io.Reader, name, node string, errs *model.ErrorList) ([]model.IPVSService, []model.IPVSConn) {
	var conns []model.IPVSConn
	var serviceNoted func(proto string, addr netip.AddrPort, mark uint32, note string, pos model.Pos) *model.IPVSService
	var (
		out  []*model.IPVSService
		byID = map[string]*model.IPVSService{}
		cur  *model.IPVSService
		mode = ipvsPlain
	)
	var names ipvsNames
	service := func(proto string, addr netip.AddrPort, mark uint32, pos model.Pos) *model.IPVSService {
		return serviceNoted(proto, addr, mark, "", pos)
	}
	serviceNoted = func(proto string, addr netip.AddrPort, mark uint32, note string, pos model.Pos) *model.IPVSService {
		id := fmt.Sprintf("%s|%s|%d|%s|%s", proto, addr, mark, node, note)
		if s := byID[id]; s != nil {
			return s
		}
		s := &model.IPVSService{Node: node, Proto: proto, Addr: addr, FWMark: mark, Note: note, Pos: pos}
		byID[id] = s
		out = append(out, s)
		return s
	}
	realNoted := func(s *model.IPVSService, addr netip.AddrPort, note string, pos model.Pos) *model.IPVSReal {
		for i := range s.Reals {
			if s.Reals[i].Addr == addr && s.Reals[i].Note == note {
				return &s.Reals[i]
			}
		}
		s.Reals = append(s.Reals, model.IPVSReal{Addr: addr, Note: note, Pos: pos})
		return &s.Reals[len(s.Reals)-1]
	}
	real := func(s *model.IPVSService, addr netip.AddrPort, pos model.Pos) *model.IPVSReal {
		return realNoted(s, addr, "", pos)
	}

	l := text.NewLines(r, name, errs)
	for l.Next() {
		line := l.Text()
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if n, ok := text.NodeMarker(line); ok {
			node = n
			continue
		}
		_, cmd, ok := text.Prompt(line)
		if !ok {
			cmd, ok = l.PastedCommand()
		}
		if ok {
			mode = ipvsModeOf(cmd, mode)
			cur = nil
			continue
		}
		f := strings.Fields(t)
		switch {
		case strings.HasPrefix(t, "IP Virtual Server version"):
			mode, cur = ipvsPlain, nil
			continue
		case strings.HasPrefix(t, "IPVS connection entries"):
			mode, cur = ipvsConns, nil
			continue
		case f[0] == "pro" && len(f) >= 3 && f[1] == "expire":
			mode, cur = ipvsConns, nil
			continue
		case mode == ipvsConns:
			c, err := ipvsConnLine(f)
			if err != nil {
				l.Errorf("%v", err)
				continue
			}
			c.Node, c.Pos = node, l.Pos()
			conns = append(conns, c)
			continue
		case f[0] == "Prot":
			mode = ipvsHeaderMode(f)
			continue
		case len(f) >= 2 && f[0] == "->" && f[1] == "RemoteAddress:Port":
			if m := ipvsHeaderMode(f); m != ipvsPlain {
				mode = m
			}
			continue
		}

		if f[0] == "-A" || f[0] == "-a" || f[0] == "-E" || f[0] == "-e" {
			if err := ipvsSaveLine(f, l.Pos(), service, real); err != nil {
				l.Errorf("%v", err)
			}
			continue
		}
		if f[0] == "->" {
			if cur == nil {
				l.Errorf("real server line before any virtual service")
				continue
			}
			if len(f) < 2 {
				l.Errorf("expected \"-> ADDRESS:PORT ...\"")
				continue
			}
			addr, note, err := names.addr(f[1], l.Pos(), t)
			if err != nil {
				l.Errorf("expected \"-> ADDRESS:PORT ...\": %v", err)
				continue
			}
			rs := realNoted(cur, addr, note, l.Pos())
			if err := ipvsRealColumns(rs, f[2:], mode); err != nil {
				l.Errorf("%v", err)
			}
			continue
		}
		sl, ok := ipvsServiceLine(f)
		note := ""
		if !ok && len(f) >= 2 && (f[0] == "TCP" || f[0] == "UDP" || f[0] == "SCTP") {
			// ipvsadm without -n: service names for ports, host names
			var err error
			if sl.addr, note, err = names.addr(f[1], l.Pos(), t); err == nil {
				sl.proto, ok = f[0], true
			}
		}
		if !ok {
			l.Errorf("expected an IPVS service line (\"TCP 10.96.0.1:443 rr\") or a real server line (\"-> 10.0.0.1:6443 Masq 1 0 0\")")
			cur = nil
			continue
		}
		cur = serviceNoted(sl.proto, sl.addr, sl.mark, note, l.Pos())
		if err := ipvsServiceColumns(cur, f[2:], mode); err != nil {
			l.Errorf("%v", err)
		}
	}
	names.report(errs)
	res := make([]model.IPVSService, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res, conns
}

// ipvsConnLine reads "TCP 14:57 ESTABLISHED 10.244.1.5:40312 10.96.0.1:443 172.18.0.2:6443"
// (with --persistent-conn: "... pe name pe_data" after the addresses).
func ipvsConnLine(f []string) (model.IPVSConn, error) {
	if len(f) < 6 {
		return model.IPVSConn{}, fmt.Errorf("expected \"PROTO EXPIRE STATE SOURCE VIRTUAL DESTINATION\", got %d columns", len(f))
	}
	c := model.IPVSConn{Proto: f[0], State: f[2]}
	m, sec, ok := strings.Cut(f[1], ":")
	mi, err1 := strconv.Atoi(m)
	se, err2 := strconv.Atoi(sec)
	if !ok || err1 != nil || err2 != nil {
		return model.IPVSConn{}, fmt.Errorf("expire %q: want MM:SS", f[1])
	}
	c.Expire = mi*60 + se
	var err error
	for i, dst := range []*netip.AddrPort{&c.Client, &c.Virtual, &c.Dest} {
		if *dst, err = parseIPVSAddr(f[3+i]); err != nil {
			return model.IPVSConn{}, err
		}
	}
	if len(f) >= 8 {
		c.PEName, c.PEData = f[6], f[7]
	}
	return c, nil
}

// ipvsModeOf reads the listing mode from the command of a prompt line.
func ipvsModeOf(cmd string, cur ipvsMode) ipvsMode {
	if !strings.Contains(cmd, "ipvsadm") {
		return cur
	}
	for _, m := range ipvsModes {
		if strings.Contains(cmd, m.option) {
			return m.mode
		}
	}
	return ipvsPlain
}

// ipvsModes are the listing modes other than the plain one: the option
// that asks for each, and a word of its column header.
var ipvsModes = []struct {
	mode           ipvsMode
	option, header string
}{
	{ipvsStats, "--stats", "InPkts"},
	{ipvsRate, "--rate", "CPS"},
	{ipvsThresholds, "--thresholds", "Uthreshold"},
	{ipvsPersist, "--persistent-conn", "PersistConn"},
}

// ipvsHeaderMode reads the listing mode from a column header line.
func ipvsHeaderMode(f []string) ipvsMode {
	h := strings.Join(f, " ")
	for _, m := range ipvsModes {
		if strings.Contains(h, m.header) {
			return m.mode
		}
	}
	return ipvsPlain
}

type ipvsSvcLine struct {
	proto string
	addr  netip.AddrPort
	mark  uint32
}

func ipvsServiceLine(f []string) (ipvsSvcLine, bool) {
	if len(f) < 2 {
		return ipvsSvcLine{}, false
	}
	switch f[0] {
	case "TCP", "UDP", "SCTP":
		a, err := parseIPVSAddr(f[1])
		if err != nil {
			return ipvsSvcLine{}, false
		}
		return ipvsSvcLine{proto: f[0], addr: a}, true
	case "FWM":
		m, err := strconv.ParseUint(f[1], 0, 32)
		if err != nil {
			return ipvsSvcLine{}, false
		}
		return ipvsSvcLine{proto: "FWM", mark: uint32(m)}, true
	}
	return ipvsSvcLine{}, false
}

// parseIPVSAddr reads "10.96.0.1:443" or "[fd00::1]:443".
func parseIPVSAddr(s string) (netip.AddrPort, error) {
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: want IP:PORT with numeric port (ipvsadm -n)", s)
	}
	return a, nil
}

func ipvsServiceColumns(s *model.IPVSService, f []string, mode ipvsMode) error {
	if mode == ipvsStats || mode == ipvsRate {
		return setCounters(&s.Stats, &s.Rate, f, mode)
	}
	if len(f) == 0 {
		return nil
	}
	s.Scheduler = f[0]
	for i := 1; i < len(f); i++ {
		if f[i] == "persistent" && i+1 < len(f) {
			n, err := strconv.Atoi(f[i+1])
			if err != nil {
				return fmt.Errorf("persistent %q: want seconds", f[i+1])
			}
			s.Persistent = n
			i++
			continue
		}
		s.Flags = append(s.Flags, f[i])
	}
	return nil
}

func ipvsRealColumns(rs *model.IPVSReal, f []string, mode ipvsMode) error {
	if mode == ipvsStats || mode == ipvsRate {
		return setCounters(&rs.Stats, &rs.Rate, f, mode)
	}
	if len(f) < 4 {
		return fmt.Errorf("expected Forward Weight ActiveConn InActConn after the address, got %d columns", len(f))
	}
	rs.Forward = f[0]
	n := make([]int, 0, 3)
	for _, s := range f[1:4] {
		v, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("column %q: want a number", s)
		}
		n = append(n, v)
	}
	switch mode {
	case ipvsThresholds:
		rs.Weight, rs.UThreshold, rs.LThreshold = n[0], n[1], n[2]
		if len(f) > 4 {
			if v, err := strconv.Atoi(f[4]); err == nil {
				rs.ActiveConn = v
			}
		}
	case ipvsPersist:
		rs.Weight, rs.PersistConn, rs.ActiveConn = n[0], n[1], n[2]
		if len(f) > 4 {
			if v, err := strconv.Atoi(f[4]); err == nil {
				rs.InactConn = v
			}
		}
	default:
		rs.Weight, rs.ActiveConn, rs.InactConn = n[0], n[1], n[2]
		if len(f) > 4 {
			rs.TunnelInfo = strings.Join(f[4:], " ")
		}
	}
	return nil
}

// setCounters reads the counters of a --stats or --rate row into stats or
// rate.
func setCounters(stats, rate **model.IPVSCounters, f []string, mode ipvsMode) error {
	c, err := ipvsCounters(f)
	if err != nil {
		return err
	}
	if mode == ipvsStats {
		*stats = c
	} else {
		*rate = c
	}
	return nil
}

// ipvsCounters reads the five counters of --stats or --rate; without
// --exact, ipvsadm prints large values with a K, M, G or T suffix.
func ipvsCounters(f []string) (*model.IPVSCounters, error) {
	if len(f) < 5 {
		return nil, fmt.Errorf("expected 5 counters, got %d", len(f))
	}
	var v [5]uint64
	for i := range v {
		x, err := iptCount(f[i]) // the same K/M/G/T rounding as iptables
		if err != nil {
			return nil, fmt.Errorf("counter %q: want a number", f[i])
		}
		v[i] = x
	}
	return &model.IPVSCounters{Conns: v[0], InPkts: v[1], OutPkts: v[2], InBytes: v[3], OutBytes: v[4]}, nil
}

// ipvsSaveLine reads one line of `ipvsadm -Sn`: "-A -t 10.96.0.1:443 -s rr"
// or "-a -t 10.96.0.1:443 -r 10.0.0.1:6443 -m -w 1".
func ipvsSaveLine(f []string, pos model.Pos,
	service func(string, netip.AddrPort, uint32, model.Pos) *model.IPVSService,
	real func(*model.IPVSService, netip.AddrPort, model.Pos) *model.IPVSReal) error {
	var (
		proto, vaddr, raddr, sched, fwd string
		weight                          = -1
		persist                         int
		flags                           []string
	)
	for i := 1; i < len(f); i++ {
		arg := func() (string, error) {
			if i+1 >= len(f) {
				return "", fmt.Errorf("%s needs a value", f[i])
			}
			i++
			return f[i], nil
		}
		var err error
		switch f[i] {
		case "-t", "--tcp-service":
			proto = "TCP"
			vaddr, err = arg()
		case "-u", "--udp-service":
			proto = "UDP"
			vaddr, err = arg()
		case "--sctp-service":
			proto = "SCTP"
			vaddr, err = arg()
		case "-f", "--fwmark-service":
			proto = "FWM"
			vaddr, err = arg()
		case "-r", "--real-server":
			raddr, err = arg()
		case "-s", "--scheduler":
			sched, err = arg()
		case "-p", "--persistent":
			var v string
			if v, err = arg(); err == nil {
				persist, err = strconv.Atoi(v)
			}
		case "-w", "--weight":
			var v string
			if v, err = arg(); err == nil {
				weight, err = strconv.Atoi(v)
			}
		case "-m", "--masquerading":
			fwd = "Masq"
		case "-g", "--gatewaying":
			fwd = "Route"
		case "-i", "--ipip":
			fwd = "Tunnel"
		default:
			flags = append(flags, f[i])
		}
		if err != nil {
			return err
		}
	}
	if proto == "" {
		return fmt.Errorf("expected -t, -u or -f with the virtual service")
	}
	var addr netip.AddrPort
	var mark uint32
	if proto == "FWM" {
		m, err := strconv.ParseUint(vaddr, 0, 32)
		if err != nil {
			return fmt.Errorf("firewall mark %q: want a number", vaddr)
		}
		mark = uint32(m)
	} else {
		a, err := parseIPVSAddr(vaddr)
		if err != nil {
			return err
		}
		addr = a
	}
	s := service(proto, addr, mark, pos)
	if f[0] == "-A" || f[0] == "-E" {
		s.Scheduler, s.Persistent, s.Flags = sched, persist, flags
		return nil
	}
	ra, err := parseIPVSAddr(raddr)
	if err != nil {
		return fmt.Errorf("real server: %w", err)
	}
	rs := real(s, ra, pos)
	rs.Forward = fwd
	if weight >= 0 {
		rs.Weight = weight
	} else {
		rs.Weight = 1
	}
	return nil
}
