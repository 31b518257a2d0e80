package capture

import (
	"bufio"
	"fmt"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// openRecords opens the capture on br, of the kind Sniff gave ("pcap" or
// "pcapng"): its records, each interface's link type, and the pcapng
// reader when it is one (nil for pcap, whose one link type links gives for
// any interface).
func openRecords(br *bufio.Reader, kind string) (recordSource, func(iface int) layers.LinkType, *pcapgo.NgReader, error) {
	if kind == "pcap" {
		pr, err := newPcapRecords(br)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("pcap header: %w", err)
		}
		link := pr.link
		return pr, func(int) layers.LinkType { return link }, nil, nil
	}
	nr, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{SkipUnknownVersion: true, WantMixedLinkType: true})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pcapng header: %w", err)
	}
	links := func(i int) layers.LinkType {
		iface, err := nr.Interface(i)
		if err != nil {
			return layers.LinkType(255)
		}
		return iface.LinkType
	}
	return ngRecords{nr}, links, nr, nil
}
