package analyzer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// DefaultNodePortRange is kube-apiserver's default --service-node-port-range.
var DefaultNodePortRange = model.PortRange{First: 30000, Last: 32767}

// nodePortRange is the NodePort range in force and where it came from.
type nodePortRange struct {
	Range   model.PortRange
	Flag    *model.Arg // the --service-node-port-range flag, nil when defaulted
	Problem string     // why a flag present could not be used
}

func (n nodePortRange) source() string {
	if n.Flag == nil {
		return "kube-apiserver default"
	}
	return "kube-apiserver --service-node-port-range"
}

func (n nodePortRange) evidence() []Evidence {
	if n.Flag == nil {
		return nil
	}
	return []Evidence{{Pos: n.Flag.Pos, Note: "--service-node-port-range=" + n.Flag.Value}}
}

// findNodePortRange returns the apiserver's NodePort range: its flag if a
// manifest or command line gives it, the default otherwise.
func findNodePortRange(s *model.Snapshot) nodePortRange {
	arg, _, ok := s.ComponentFlag("kube-apiserver", "service-node-port-range")
	if !ok {
		return nodePortRange{Range: DefaultNodePortRange}
	}
	r, err := model.ParsePortRange(arg.Value)
	if err != nil {
		return nodePortRange{Range: DefaultNodePortRange, Problem: err.Error()}
	}
	return nodePortRange{Range: r, Flag: &arg}
}

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

func inRanges(port uint16, rs []model.PortRange) bool {
	for _, r := range rs {
		if r.Contains(port) {
			return true
		}
	}
	return false
}

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

func rangesLen(rs []model.PortRange) int {
	n := 0
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// portOwner is something on a node that owns a port: an IPVS virtual service
// or a Service's NodePort.
type portOwner struct {
	Port  uint16
	Proto string
	What  string // "IPVS TCP 10.0.0.1:30080" or "Service ns/name"
	Pos   model.Pos
}

// portOwners indexes the ports that IPVS virtual services and Service
// NodePorts own, by port. node restricts IPVS entries to that node ("" = all
// nodes); NodePorts are cluster-wide.
func portOwners(s *model.Snapshot, node string) map[uint16][]portOwner {
	out := map[uint16][]portOwner{}
	for _, vs := range s.IPVS {
		if vs.Proto == "FWM" || !vs.Addr.IsValid() {
			continue
		}
		if node != "" && vs.Node != "" && vs.Node != node {
			continue
		}
		p := vs.Addr.Port()
		out[p] = append(out[p], portOwner{
			Port: p, Proto: vs.Proto,
			What: fmt.Sprintf("IPVS virtual service %s %s", vs.Proto, vs.Addr),
			Pos:  vs.Pos,
		})
	}
	for _, np := range s.Kube.NodePorts() {
		out[np.Port] = append(out[np.Port], portOwner{
			Port: np.Port, Proto: np.Protocol,
			What: fmt.Sprintf("NodePort %d/%s of Service %s/%s", np.Port, np.Protocol, np.Namespace, np.Service),
			Pos:  np.Pos,
		})
	}
	return out
}

// services returns the distinct "namespace/name" of the Service owners.
func serviceNames(owners []portOwner) []string {
	var out []string
	for _, o := range owners {
		if _, name, ok := strings.Cut(o.What, "of Service "); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
