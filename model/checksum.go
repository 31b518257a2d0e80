package model

import (
	"net/netip"
	"time"
)

// ChecksumError is a packet a capture shows arriving with a wrong
// transport checksum, as the decoder that printed it computed it
// (tcpdump -v: "[bad udp cksum 0x9c31 -> 0x2f5a!]"). The receiving kernel
// drops such a packet before any socket sees it.
type ChecksumError struct {
	Pos  Pos       `json:"pos"`
	Time time.Time `json:"time,omitzero"`
	Node string    `json:"node,omitempty"`
	// Proto is the transport whose checksum is wrong: "udp".
	Proto string         `json:"proto"`
	Src   netip.AddrPort `json:"src"`
	Dst   netip.AddrPort `json:"dst"`
}
