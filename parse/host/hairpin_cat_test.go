package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func readHairpinCatString(t testing.TB, in, cmd string) ([]model.Link, error) {
	snap := &model.Snapshot{}
	src := &format.File{Name: "x.txt", Format: HairpinCatFormat.Name, Command: cmd}
	_, err := HairpinCatFormat.Parse(context.Background(), strings.NewReader(in), src, snap)
	return snap.Links, err
}

func hairpinCatLines(links []model.Link) string {
	var out []string
	for _, l := range links {
		out = append(out, fmt.Sprintf("%d %s %s %t", l.Pos.Line, l.Master, l.Dev, *l.Hairpin))
	}
	return strings.Join(out, "|")
}

// cat of docker0's ports as pasted in kubernetes#23322 (fixtures/field):
// four ports of docker0, by the glob and their rank, hairpin off.
func TestHairpinCatReal(t *testing.T) {
	rel := "fixtures/field/hairpin-drop--k8s-23322/hairpin_mode.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	if s := HairpinCatFormat.Sniff(rel, b); s < 90 {
		t.Errorf("sniff %d", s)
	}
	links, err := readHairpinCatString(t, string(b), "")
	if err != nil {
		t.Error(err)
	}
	if got, want := hairpinCatLines(links), "2 docker0 veth*#1 false|3 docker0 veth*#2 false|4 docker0 veth*#3 false|5 docker0 veth*#4 false"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// A prompt's command, a brport path of one device, a value that is not
// 0 or 1, and values with no cat before them.
func TestHairpinCatForms(t *testing.T) {
	in := "root@node1:~# cat /sys/class/net/veth1a2b/brport/hairpin_mode\n1\nroot@node1:~# cat /sys/class/net/cni0/brif/veth*/hairpin_mode\n0\n2\n"
	links, err := readHairpinCatString(t, in, "")
	if got, want := hairpinCatLines(links), "2  veth1a2b true|4 cni0 veth*#1 false"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "x.txt:5") {
		t.Errorf("the value 2 not reported: %v", err)
	}
	if _, err := readHairpinCatString(t, "0\n1\n", ""); err == nil {
		t.Error("values without their cat not reported")
	}
	if links, _ := readHairpinCatString(t, "0\n", "cat /sys/devices/virtual/net/docker0/brif/veth*/hairpin_mode"); hairpinCatLines(links) != "1 docker0 veth*#1 false" {
		t.Errorf("the source's command not read: %s", hairpinCatLines(links))
	}
	for _, other := range []string{"0\n1\n", "cat /etc/hosts\n127.0.0.1 localhost\n"} {
		if s := HairpinCatFormat.Sniff("x.txt", []byte(other)); s != 0 {
			t.Errorf("%q sniffed %d", other, s)
		}
	}
}

func FuzzHairpinCat(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/hairpin-drop--k8s-23322/hairpin_mode.txt"})
	f.Add("# cat /sys/class/net/*/brport/hairpin_mode\n1\n0\n")
	f.Fuzz(func(t *testing.T, in string) {
		links, err := readHairpinCatString(t, in, "")
		parsetest.CheckFuzzErrors(t, err, "x.txt")
		for _, l := range links {
			if l.Pos.Line == 0 || l.Hairpin == nil || l.Dev == "" {
				t.Fatalf("bad link: %+v", l)
			}
		}
		if s := HairpinCatFormat.Sniff("x.txt", []byte(in)); s < 0 || s > 100 {
			t.Fatalf("sniff %d", s)
		}
	})
}
