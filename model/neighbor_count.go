package model

// NeighborCount is the size of a neighbor table as a count of its listing
// printed it:
//
//	$ arp -an | wc -l
//	1352
//
// A ticket often carries the count alone, where the table would be too
// long to paste: the size is what tells a full table (gc_thresh3).
type NeighborCount struct {
	Node string `json:"node,omitempty"`
	// Family is "ipv4" or "ipv6" when the listing held one family
	// (arp, ip -4 neigh, ip -6 neigh), "" when it held both (ip neigh).
	Family  string `json:"family,omitempty"`
	Count   int    `json:"count"`
	Command string `json:"command"` // the command line counted
	Pos     Pos    `json:"pos"`     // the count's line
}
