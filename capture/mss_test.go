package capture_test

import (
	"fmt"
	"testing"
)

// The MSS options of the handshakes of a real capture (the mtu-blackhole
// fixture: Linux announces 1460 over IPv4 and 1440 over IPv6 on links of
// MTU 1500), as tcpdump prints them.
func TestAttemptMSS(t *testing.T) {
	res, err := readFixture(t, "incidents/mtu-blackhole/capture.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range res.Attempts {
		got = append(got, fmt.Sprintf("%s->%s mss=%d server_mss=%d", a.Client, a.Server, a.MSS, a.ServerMSS))
	}
	if len(got) != 2 || got[0] != fmt.Sprintf("%s->10.78.3.2:8080 mss=1460 server_mss=1460", res.Attempts[0].Client) ||
		got[1] != fmt.Sprintf("%s->[fd78:3::2]:8081 mss=1440 server_mss=1440", res.Attempts[1].Client) {
		t.Errorf("attempts:\n%v", got)
	}
}
