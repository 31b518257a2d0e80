package host

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

func (sr *sockReader) addCount(c model.SocketCount) {
	c.Node = sr.node
	c.Pos = sr.l.Pos()
	sr.counts = append(sr.counts, c)
}

// countHeaderWords are the header words that a count of a column picks up
// ("1 State", "1 Foreign", "1 established)" from netstat's banner).
var countHeaderWords = map[string]bool{
	"State": true, "Recv-Q": true, "Send-Q": true, "Local": true, "Peer": true, "Foreign": true,
	"Address": true, "Address:Port": true, "Netid": true, "Proto": true, "Process": true, "PID/Program": true,
	"established)": true, "servers)": true, "Internet": true, "connections": true, "Active": true, "only": true,
	"domain": true, "RefCnt": true, "Flags": true, "Type": true, "I-Node": true, "Path": true, "Timer": true,
	"User": true, "Inode": true, "w/o": true,
}

// countLine reads "N VALUE", a line of ... | sort | uniq -c, where VALUE is
// a state, an address or an address and port. A comment after the value
// ("161 10.10.85.105 # Zabbix") is ignored.
func (sr *sockReader) countLine(t string) (bool, error) {
	if i := strings.Index(t, " #"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	f := strings.Fields(t)
	if len(f) != 2 || !isUint(f[0]) {
		return false, nil
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return true, fmt.Errorf("count %q: want a number", f[0])
	}
	v := f[1]
	c := model.SocketCount{Proto: sr.cmd.proto, State: sr.cmd.state, Count: n}
	if countHeaderWords[v] {
		sr.skip("header words counted")
		return true, nil
	}
	if st := sockStateName(v); st != "" {
		c.State = st
		sr.addCount(c)
		return true, nil
	}
	if isUint(v) || v == "*" {
		sr.skip("counts by port skipped")
		return true, nil
	}
	addr, port, ok := countAddr(v)
	if !ok {
		return true, fmt.Errorf("count of %q: expected a socket state or an address", v)
	}
	c.Port = port
	switch sr.cmd.column {
	case "local":
		c.Local = addr
	case "peer":
		c.Peer = addr
	default:
		c.Addr = addr
	}
	sr.addCount(c)
	return true, nil
}

// countAddr reads a counted address: "10.0.0.1", "[fd00::1]", "fd00::1",
// "10.0.0.1:8080", "[::ffff:10.0.0.2]:443", "0.0.0.0%eth0".
func countAddr(v string) (netip.Addr, uint16, bool) {
	strip := func(h string) string {
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if i := strings.IndexByte(h, '%'); i >= 0 {
			h = h[:i]
		}
		return h
	}
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") || !strings.HasPrefix(v, "[") {
		if a, err := netip.ParseAddr(strip(v)); err == nil {
			return a.Unmap(), 0, true
		}
	}
	ap, _, note, err := parseSockAddr(v, true, "ss")
	if err != nil || note != "" || !ap.Addr().IsValid() {
		return netip.Addr{}, 0, false
	}
	return ap.Addr(), ap.Port(), true
}
