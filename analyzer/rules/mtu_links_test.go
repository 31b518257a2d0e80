package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/host"
)

// The link that carries the smallest packets, on the real listings of
// parse/testdata/make-link.sh: the value is the point.
func TestSmallestLink(t *testing.T) {
	for _, c := range []struct {
		file  string
		dev   string
		limit int
		why   string
	}{
		// The VXLAN's own MTU.
		{"ip-d-link.txt", "nmg1-vx", 1450, "nmg1-vx (vxlan) has MTU 1450"},
		// The link under it lowered to 1460: 1410 bytes for the VXLAN's packets.
		{"ip-d-link-underlay-1460.txt", "nmg1-vx", 1410, "nmg1-vx (vxlan) carries packets of up to 1410 bytes: nmg1-eth0's MTU 1460 less the 50 bytes of vxlan"},
		// Without -d the type is not shown: only MTUs.
		{"ip-link.txt", "nmg1-vx", 1450, "nmg1-vx has MTU 1450"},
	} {
		f, err := os.Open(filepath.Join(testutil.Root(), "parse/testdata/link", c.file))
		if err != nil {
			t.Fatal(err)
		}
		links, err := host.Links(f, c.file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, n, ok := smallestLink(&model.Snapshot{Links: links})
		if !ok || n != 8 || got.link.Dev != c.dev || got.limit != c.limit || got.why != c.why {
			t.Errorf("%s: %d links, %+v", c.file, n, got)
		}
	}
	if _, _, ok := smallestLink(&model.Snapshot{Links: []model.Link{{Dev: "lo", MTU: 65536}, {Dev: "eth0"}}}); ok {
		t.Error("loopback and a link without its MTU gave a smallest link")
	}
}
