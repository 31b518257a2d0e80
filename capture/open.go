package capture

import (
	"bufio"
	"fmt"

	"github.com/gopacket/gopacket/layers"
)

// openRecords opens the capture on br, of the kind Sniff gave ("pcap" or
// "pcapng"): its records, each interface's link type, and the pcapng
// reader when it is one (nil for pcap, whose one link type links gives for
// any interface).
func openRecords(br *bufio.Reader, kind string) (recordSource, func(iface int) layers.LinkType, *pcapngRecords, error) {
	if kind == "pcap" {
		pr, err := newPcapRecords(br)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("pcap header: %w", err)
		}
		link := pr.link
		return pr, func(int) layers.LinkType { return link }, nil, nil
	}
	nr, err := newPcapngRecords(br)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pcapng header: %w", err)
	}
	return nr, nr.links, nr, nil
}
