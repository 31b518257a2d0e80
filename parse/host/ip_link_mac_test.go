package host

import (
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// ip link's "link/ether" lines and ip -j link's address give each ether
// link its MAC, the same in both; the loopback has none.
func TestLinkMACs(t *testing.T) {
	for _, c := range []struct{ json, text string }{{"ip-j-link.txt", "ip-link.txt"}, {"ip-j-d-link.txt", "ip-d-link.txt"}} {
		text := parsetest.ReadFile(t, linkDir+c.text, Links)
		js := parsetest.ReadFile(t, linkDir+c.json, LinksJSON)
		if len(text) != len(js) || len(text) == 0 {
			t.Fatalf("%s: %d links, %s: %d", c.text, len(text), c.json, len(js))
		}
		for i, l := range text {
			switch {
			case l.Dev == "lo" && l.MAC != "":
				t.Errorf("%s: lo has MAC %q", c.text, l.MAC)
			case l.Dev != "lo" && len(l.MAC) != len("02:00:00:00:00:00"):
				t.Errorf("%s: %s has MAC %q", c.text, l.Dev, l.MAC)
			case js[i].MAC != l.MAC:
				t.Errorf("%s: %s has MAC %q, %s %q", c.json, l.Dev, js[i].MAC, c.text, l.MAC)
			}
		}
	}
}
