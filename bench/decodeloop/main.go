// Command decodeloop is the baseline of `make bench`: the least work any Go
// program must do to look at every TCP header of a capture. It reads a pcap
// or pcapng file with gopacket's pcapgo, decodes Ethernet, Linux SLL/SLL2,
// IPv4, IPv6 and TCP with a DecodingLayerParser, and counts SYN, SYN/ACK and
// RST segments, keeping no state. netmortem's capture reader does this and
// also tracks every connection, so its time is held against this loop's.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

type source interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: decodeloop CAPTURE")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "decodeloop:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	magic, err := br.Peek(4)
	if err != nil {
		return err
	}
	var src source
	var link layers.LinkType
	if magic[0] == 0x0a && magic[1] == 0x0d {
		r, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return err
		}
		src, link = r, r.LinkType()
	} else {
		r, err := pcapgo.NewReader(br)
		if err != nil {
			return err
		}
		src, link = r, r.LinkType()
	}

	var (
		eth  layers.Ethernet
		sll  layers.LinuxSLL
		sll2 layers.LinuxSLL2
		ip4  layers.IPv4
		ip6  layers.IPv6
		tcp  layers.TCP
		udp  layers.UDP
	)
	first := map[layers.LinkType]gopacket.LayerType{
		layers.LinkTypeEthernet:  layers.LayerTypeEthernet,
		layers.LinkTypeLinuxSLL:  layers.LayerTypeLinuxSLL,
		layers.LinkTypeLinuxSLL2: layers.LayerTypeLinuxSLL2,
		layers.LinkTypeRaw:       layers.LayerTypeIPv4,
	}[link]
	if first == 0 {
		return fmt.Errorf("link type %v not handled", link)
	}
	parser := gopacket.NewDecodingLayerParser(first, &eth, &sll, &sll2, &ip4, &ip6, &tcp, &udp)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 8)

	var packets, syn, synack, rst int
	for {
		data, _, err := src.ZeroCopyReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		packets++
		_ = parser.DecodeLayers(data, &decoded)
		for _, lt := range decoded {
			if lt != layers.LayerTypeTCP {
				continue
			}
			switch {
			case tcp.SYN && tcp.ACK:
				synack++
			case tcp.SYN:
				syn++
			}
			if tcp.RST {
				rst++
			}
		}
	}
	fmt.Printf("packets %d syn %d synack %d rst %d\n", packets, syn, synack, rst)
	return nil
}
