package model

import "net/netip"

// RouteRule is one policy routing rule (`ip rule`): which routing table
// the packets it selects are looked up in, before the main table.
type RouteRule struct {
	Node string `json:"node,omitempty"`
	// Priority is the rule's preference: rules are tried in increasing
	// order.
	Priority int `json:"priority"`
	// Family is "inet" or "inet6", from the addresses or the command (ip
	// -6 rule); "" when neither says.
	Family string `json:"family,omitempty"`
	// Not inverts the selector ("not from all iif lo").
	Not bool `json:"not,omitempty"`
	// From and To are the source and destination selected; From is the
	// zero prefix for "from all", To for no "to".
	From netip.Prefix `json:"from,omitzero"`
	To   netip.Prefix `json:"to,omitzero"`
	// Iif and Oif are the input and output interfaces selected.
	Iif string `json:"iif,omitempty"`
	Oif string `json:"oif,omitempty"`
	// FwMark is the firewall mark selected, as printed ("0x4000/0x4000").
	FwMark string `json:"fwmark,omitempty"`
	// Table is the table looked up (lookup NAME, table NAME), "" for
	// another action.
	Table string `json:"table,omitempty"`
	// Action is "lookup", or the rule's own action: unreachable,
	// prohibit, blackhole, goto, nop.
	Action string `json:"action"`
	Raw    string `json:"raw"`
	Pos    Pos    `json:"pos"`
}
