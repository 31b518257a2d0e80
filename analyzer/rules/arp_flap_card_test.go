package rules

import "testing"

func TestAdjacentBurnedInMACs(t *testing.T) {
	for _, c := range []struct {
		macs []string
		want bool
	}{
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:87:eb"}, true},                      // two ports of one card
		{[]string{"00:23:8b:bd:87:01", "00:23:8b:bd:87:02", "00:23:8b:bd:87:03"}, true}, // three in sequence
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:87:ee"}, false},                     // a gap
		{[]string{"00:23:8b:bd:87:ec", "00:23:8b:bd:88:ed"}, false},                     // another fifth octet
		{[]string{"02:42:ac:11:00:02", "02:42:ac:11:00:03"}, false},                     // locally administered (Docker)
		{[]string{"01:00:5e:00:00:01", "01:00:5e:00:00:02"}, false},                     // multicast
		{[]string{"00:50:56:8a:d3:04", "00:50:56:8a:97:08"}, false},                     // two VMs
		{[]string{"00:23:8b:bd:87:ec"}, false},                                          // one MAC
		{[]string{"00:23:8b:bd:87:ec", "not-a-mac"}, false},
	} {
		if got := adjacentBurnedInMACs(c.macs); got != c.want {
			t.Errorf("adjacentBurnedInMACs(%v) = %v, want %v", c.macs, got, c.want)
		}
	}
}
