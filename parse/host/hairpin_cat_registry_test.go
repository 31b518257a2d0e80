package host_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// cat of the hairpin_mode files over a glob is read as such, not as grep's
// path:value lines, and the other link listings are not.
func TestSniffHairpinCat(t *testing.T) {
	own := []string{"fixtures/field/hairpin-drop--k8s-23322/hairpin_mode.txt"}
	others := []string{"parse/testdata/link/brport-hairpin-grep.txt", "parse/testdata/link/bridge-d-link.txt",
		"parse/testdata/link/ip-d-link.txt", "parse/testdata/neigh/neigh-count.txt"}
	parsetest.CheckSniff(t, parse.Formats(), host.HairpinCatFormat, own, others)
}
