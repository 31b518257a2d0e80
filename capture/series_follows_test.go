package capture

import (
	"testing"
	"time"
)

// A file follows the files before it in a series by its format, its link
// types and its start, no earlier than the skew of the format's
// timestamps before their last packet: 100 ms for tcpdump's pcap, a
// second for dumpcap's pcapng of several interfaces.
func TestFollows(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	last := t0.Add(10 * time.Second)
	for _, c := range []struct {
		name string
		prev Head
		h    Head
		want bool
	}{
		{"pcap after the last packet", Head{"pcap", "Ethernet", t0}, Head{"pcap", "Ethernet", last.Add(time.Second)}, true},
		{"pcap 50 ms before it", Head{"pcap", "Ethernet", t0}, Head{"pcap", "Ethernet", last.Add(-50 * time.Millisecond)}, true},
		{"pcap 500 ms before it", Head{"pcap", "Ethernet", t0}, Head{"pcap", "Ethernet", last.Add(-500 * time.Millisecond)}, false},
		{"pcapng 500 ms before it", Head{"pcapng", "Ethernet, Linux SLL2", t0}, Head{"pcapng", "Ethernet, Linux SLL2", last.Add(-500 * time.Millisecond)}, true},
		{"pcapng 2 s before it", Head{"pcapng", "Ethernet, Linux SLL2", t0}, Head{"pcapng", "Ethernet, Linux SLL2", last.Add(-2 * time.Second)}, false},
		{"pcapng of other interfaces", Head{"pcapng", "Ethernet, Linux SLL2", t0}, Head{"pcapng", "Linux SLL2", last}, false},
		{"another format", Head{"pcap", "Ethernet", t0}, Head{"pcapng", "Ethernet", last}, false},
		{"at the start of the one before", Head{"pcap", "Ethernet", t0}, Head{"pcap", "Ethernet", t0}, false},
		{"no packet", Head{"pcap", "Ethernet", t0}, Head{"pcap", "", time.Time{}}, false},
	} {
		if got := follows(c.prev, last, c.h); got != c.want {
			t.Errorf("%s: follows %v, want %v", c.name, got, c.want)
		}
	}
}
