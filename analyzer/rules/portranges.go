package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Port ranges: what the rules about ephemeral ports and NodePorts
// (ephemeral-nodeport-overlap, synack-reset, timewait-churn) compute with
// them, and the fix they share.

// subtract returns the parts of r not covered by any range in minus, in
// order.
func subtract(r model.PortRange, minus []model.PortRange) []model.PortRange {
	parts := []model.PortRange{r}
	for _, m := range minus {
		var next []model.PortRange
		for _, p := range parts {
			if m.Last < p.First || m.First > p.Last {
				next = append(next, p)
				continue
			}
			if m.First > p.First {
				next = append(next, model.PortRange{First: p.First, Last: m.First - 1})
			}
			if m.Last < p.Last {
				next = append(next, model.PortRange{First: m.Last + 1, Last: p.Last})
			}
		}
		parts = next
	}
	return parts
}

// intersect returns the ports in both a and b.
func intersect(a, b model.PortRange) (model.PortRange, bool) {
	lo, hi := max(a.First, b.First), min(a.Last, b.Last)
	if lo > hi {
		return model.PortRange{}, false
	}
	return model.PortRange{First: lo, Last: hi}, true
}

// inRanges reports whether port is in one of rs.
func inRanges(port uint16, rs []model.PortRange) bool {
	for _, r := range rs {
		if r.Contains(port) {
			return true
		}
	}
	return false
}

// rangesString lists rs: "20000-29999,30001-40000", a single port alone.
func rangesString(rs []model.PortRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		if r.First == r.Last {
			parts[i] = strconv.Itoa(int(r.First))
		} else {
			parts[i] = r.String()
		}
	}
	return strings.Join(parts, ",")
}

// rangesLen counts the ports of rs.
func rangesLen(rs []model.PortRange) int {
	n := 0
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// reserveFix words the fix for an ephemeral range reaching into NodePorts:
// add the NodePort range to ip_local_reserved_ports (keeping what is there).
func reserveFix(np model.PortRange, reserved string) string {
	want := np.String()
	if r := strings.TrimSpace(reserved); r != "" {
		want = r + "," + want
	}
	return fmt.Sprintf("Reserve the NodePort range so the kernel never picks those ports as ephemeral source ports: "+
		"`sysctl -w net.ipv4.ip_local_reserved_ports=%s`, and persist it in /etc/sysctl.d/ "+
		"(for example `echo 'net.ipv4.ip_local_reserved_ports = %s' > /etc/sysctl.d/90-nodeport-reserved.conf`). "+
		"Alternatively move net.ipv4.ip_local_port_range out of %s.", want, want, np)
}
