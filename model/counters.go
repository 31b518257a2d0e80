package model

// Counter is one kernel counter as nstat prints it ("TcpExtIPReversePathFilter
// 7 0.0"): the name joins the MIB's prefix (Ip, Tcp, TcpExt, Udp6 ...) and
// the counter's own name. Value is what the listing shows: the absolute
// value for `nstat -a` and `nstat -az`, the increase since nstat last ran
// otherwise.
type Counter struct {
	Node  string `json:"node,omitempty"`
	Name  string `json:"name"`
	Value uint64 `json:"value"`
	Pos   Pos    `json:"pos"`
}

// Counter returns the last counter named name the snapshot shows for node
// (node "" matches any, and a counter without a node matches every node),
// and whether there is one.
func (s *Snapshot) Counter(node, name string) (Counter, bool) {
	for i := len(s.Counters) - 1; i >= 0; i-- {
		c := s.Counters[i]
		if c.Name == name && (node == "" || c.Node == "" || c.Node == node) {
			return c, true
		}
	}
	return Counter{}, false
}
