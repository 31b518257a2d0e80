// Package services maps service names to ports, as network tools print
// ports when not asked for numbers (tcpdump without -nn, ipvsadm without
// -n, netstat without -n): Debian's /etc/services names first, then the
// IANA registry's. It is a leaf package, so that the capture readers and
// the parsers of netfilter listings share one table.
package services

import (
	"sync"

	"github.com/gopacket/gopacket/layers"
)

// ports maps the port names tools print without -n to ports:
// Debian's /etc/services first, then the IANA registry names gopacket
// carries (what RHEL's much longer /etc/services holds), leaving out IANA
// names given to several ports.
var ports = sync.OnceValue(func() map[string]uint16 {
	m := make(map[string]uint16, 6000)
	ambiguous := map[string]bool{}
	add := func(name string, port uint16) {
		if p, ok := m[name]; ok && p != port {
			ambiguous[name] = true
		}
		m[name] = port
	}
	for p := 1; p < 1<<16; p++ {
		if n, ok := layers.TCPPortNames(layers.TCPPort(p)); ok {
			add(n, uint16(p))
		}
		if n, ok := layers.UDPPortNames(layers.UDPPort(p)); ok {
			add(n, uint16(p))
		}
	}
	for n := range ambiguous {
		delete(m, n)
	}
	for n, p := range debianServices {
		m[n] = p
	}
	return m
})

// Port returns the port of a service name as tools print it when not
// asked for numbers (tcpdump without -nn, ipvsadm without -n, netstat
// without -n): Debian's /etc/services names, then the IANA registry's.
func Port(name string) (uint16, bool) {
	p, ok := ports()[name]
	return p, ok
}
