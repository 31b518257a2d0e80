package model

// Ruleset is a node's netfilter state: the tables, chains and rules of one
// `iptables-save`, `iptables -L`, `iptables -S` or `nft list ruleset` dump.
type Ruleset struct {
	Node   string   `json:"node,omitempty"`
	Family string   `json:"family"` // ipv4, ipv6, inet
	Format string   `json:"format"` // iptables-save, iptables-list, iptables-S, nft
	Tables []*Table `json:"tables"`
	Pos    Pos      `json:"pos"`
}

// Table is one netfilter table (filter, nat, mangle, raw).
type Table struct {
	Name   string   `json:"name"`
	Chains []*Chain `json:"chains"`
	Pos    Pos      `json:"pos"`
}

// Chain is one chain with its rules in order.
type Chain struct {
	Name    string  `json:"name"`
	Policy  string  `json:"policy,omitempty"` // ACCEPT, DROP, or "" for user chains
	Packets uint64  `json:"packets,omitempty"`
	Bytes   uint64  `json:"bytes,omitempty"`
	Rules   []*Rule `json:"rules"`
	Pos     Pos     `json:"pos"`
}

// Rule is one netfilter rule. Raw keeps the rule as printed; the typed
// fields hold what netmortem understood of it.
type Rule struct {
	Raw    string `json:"raw"`
	Target string `json:"target,omitempty"` // jump target: ACCEPT, DNAT, KUBE-SVC-XXXX ...
	Pos    Pos    `json:"pos"`
}

// Table returns the table called name, or nil.
func (r *Ruleset) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Chain returns the chain called name, or nil.
func (t *Table) Chain(name string) *Chain {
	for _, c := range t.Chains {
		if c.Name == name {
			return c
		}
	}
	return nil
}
