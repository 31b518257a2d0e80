package flows

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/fit"
)

// At 80 columns the attempts are a table of their most telling columns,
// one line each, the frames of the single capture without its name, and a
// line names the columns left out; too narrow even for those, one block
// per attempt; wide enough, every column.
func TestWriteTableNarrowed(t *testing.T) {
	tab := Build(snapshot(), Filter{})
	var b strings.Builder
	if err := tab.WriteTable(&b, 80); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if fit.Width(l) > 80 {
			t.Errorf("line %d wide: %q", fit.Width(l), l)
		}
	}
	for _, want := range []string{
		"where: the first frame of each attempt in c.pcap\n",
		"│ #1    │ 10.0.0.2:40001 │ 10.0.0.9:80  │ synack_client_rst │ RSTO  │",
		"Not shown at this width: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "client: ") || strings.Contains(out, "c.pcap#frame=") {
		t.Errorf("blocks or repeated capture names:\n%s", out)
	}

	b.Reset()
	if err := tab.WriteTable(&b, 40); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "client:    10.0.0.2:40001") || strings.Contains(b.String(), "Not shown") {
		t.Errorf("at 40 columns:\n%s", b.String())
	}

	b.Reset()
	if err := tab.WriteTable(&b, 300); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "bytes_in") || strings.Contains(b.String(), "Not shown") {
		t.Errorf("at 300 columns:\n%s", b.String())
	}
}
