package services

import "testing"

func TestPort(t *testing.T) {
	for _, c := range []struct {
		name string
		port uint16
		ok   bool
	}{
		{"domain", 53, true},     // Debian's name
		{"https", 443, true},     // in both
		{"kubernetes", 0, false}, // neither
		{"", 0, false},
	} {
		if p, ok := Port(c.name); p != c.port || ok != c.ok {
			t.Errorf("Port(%q) = %d, %v; want %d, %v", c.name, p, ok, c.port, c.ok)
		}
	}
}
