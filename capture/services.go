package capture

import (
	"sync"

	"github.com/gopacket/gopacket/layers"
)

// servicePorts maps the port names tcpdump prints without -nn to ports:
// Debian's /etc/services first, then the IANA registry names gopacket
// carries (what RHEL's much longer /etc/services holds), leaving out IANA
// names given to several ports.
var servicePorts = sync.OnceValue(func() map[string]uint16 {
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

// servicePort returns the port tcpdump names name.
func servicePort(name string) (uint16, bool) {
	p, ok := servicePorts()[name]
	return p, ok
}

// ServicePort returns the port of a service name as tools print it when not
// asked for numbers (tcpdump without -nn, ipvsadm without -n, netstat
// without -n): Debian's /etc/services names, then the IANA registry's.
func ServicePort(name string) (uint16, bool) { return servicePort(name) }
