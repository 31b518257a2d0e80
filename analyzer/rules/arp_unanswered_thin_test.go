package rules

import "testing"

func TestArpingExpectsNoReply(t *testing.T) {
	for cmd, want := range map[string]bool{
		"arping -c 2 -w 3 -I eth0 10.99.0.77": false,
		"arping 10.0.9.171":                   false,
		"arping -D -I eth0 10.99.0.77":        true, // duplicate address detection
		"sudo arping -Dq -c 2 10.99.0.77":     true,
		"arping -U -I eth0 10.99.0.77":        true, // unsolicited announcement
		"arping -A -c 1 -I eth0 10.99.0.77":   true,
		"arping --count=2 -I eth0 10.99.0.77": false,
		"":                                    false,
	} {
		if got := arpingExpectsNoReply(cmd); got != want {
			t.Errorf("arpingExpectsNoReply(%q) = %v, want %v", cmd, got, want)
		}
	}
}
