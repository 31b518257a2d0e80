package host

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// linkLines formats links one a line: position, device, MTU, type with
// its id and port, master, state and hairpin ("-" when not shown).
func linkLines(links []model.Link) []string {
	var out []string
	for _, l := range links {
		h := "-"
		if l.Hairpin != nil {
			h = fmt.Sprint(*l.Hairpin)
		}
		out = append(out, fmt.Sprintf("%d %s mtu=%d kind=%s vni=%d port=%d master=%s state=%s hairpin=%s",
			l.Pos.Line, l.Dev, l.MTU, l.Kind, l.VNI, l.Port, l.Master, l.State, h))
	}
	return out
}

const linkDir = "parse/testdata/link/"

// The real outputs of parse/testdata/make-link.sh: a VXLAN with MTU 1450
// over a veth, a bridge with one port in hairpin mode and one not.
func TestLinksReal(t *testing.T) {
	parsetest.CheckLines(t, "ip-d-link.txt", linkLines(parsetest.ReadFile(t, linkDir+"ip-d-link.txt", Links)), []string{
		"1 lo mtu=65536 kind= vni=0 port=0 master= state=UNKNOWN hairpin=-",
		"3 nmg1-peer mtu=1500 kind=veth vni=0 port=0 master= state=UP hairpin=-",
		"6 nmg1-eth0 mtu=1500 kind=veth vni=0 port=0 master= state=UP hairpin=-",
		"9 nmg1-vx mtu=1450 kind=vxlan vni=1 port=4789 master= state=UNKNOWN hairpin=-",
		"12 nmg1-br mtu=1500 kind=bridge vni=0 port=0 master= state=UP hairpin=-",
		"15 nmg1-p1 mtu=1500 kind=veth vni=0 port=0 master= state=UP hairpin=-",
		"18 nmg1-v1 mtu=1500 kind=veth vni=0 port=0 master=nmg1-br state=UP hairpin=true",
		"22 nmg1-p2 mtu=1500 kind=veth vni=0 port=0 master= state=UP hairpin=-",
		"25 nmg1-v2 mtu=1500 kind=veth vni=0 port=0 master=nmg1-br state=UP hairpin=false",
	})
	parsetest.CheckLines(t, "bridge-d-link.txt", linkLines(parsetest.ReadFile(t, linkDir+"bridge-d-link.txt", Links)), []string{
		"1 nmg1-v1 mtu=1500 kind= vni=0 port=0 master=nmg1-br state=forwarding hairpin=true",
		"3 nmg1-v2 mtu=1500 kind= vni=0 port=0 master=nmg1-br state=forwarding hairpin=false",
	})
	parsetest.CheckLines(t, "bridge-link.txt", linkLines(parsetest.ReadFile(t, linkDir+"bridge-link.txt", Links)), []string{
		"1 nmg1-v1 mtu=1500 kind= vni=0 port=0 master=nmg1-br state=forwarding hairpin=-",
		"2 nmg1-v2 mtu=1500 kind= vni=0 port=0 master=nmg1-br state=forwarding hairpin=-",
	})
	parsetest.CheckLines(t, "brport-hairpin-grep.txt", linkLines(parsetest.ReadFile(t, linkDir+"brport-hairpin-grep.txt", HairpinFiles)), []string{
		"1 nmg1-v1 mtu=0 kind= vni=0 port=0 master= state= hairpin=true",
		"2 nmg1-v2 mtu=0 kind= vni=0 port=0 master= state= hairpin=false",
	})
	// ip link without -d: no type, no hairpin.
	plain := linkLines(parsetest.ReadFile(t, linkDir+"ip-link.txt", Links))
	if len(plain) != 9 || plain[3] != "7 nmg1-vx mtu=1450 kind= vni=0 port=0 master= state=UNKNOWN hairpin=-" ||
		plain[6] != "13 nmg1-v1 mtu=1500 kind= vni=0 port=0 master=nmg1-br state=UP hairpin=-" {
		t.Errorf("ip link:\n%s", strings.Join(plain, "\n"))
	}
}

// ip -j link and ip -j -d link, taken beside the text, give the same
// records.
func TestLinksJSONMatchesText(t *testing.T) {
	for _, c := range []struct{ json, text string }{{"ip-j-link.txt", "ip-link.txt"}, {"ip-j-d-link.txt", "ip-d-link.txt"}} {
		got := linkLines(parsetest.ReadFile(t, linkDir+c.json, LinksJSON))
		want := linkLines(parsetest.ReadFile(t, linkDir+c.text, Links))
		parsetest.CheckLines(t, c.json, withoutLine(got), withoutLine(want))
	}
}

func TestLinksErrors(t *testing.T) {
	in := "2: eth0: <UP> mtu x state UP\n    link/ether 02:00:00:00:00:01\n3: eth1: <UP> mtu 1400 state UP\nbogus line\n    vxlan id 5 dstport 8472\n"
	out, err := Links(strings.NewReader(in), "l.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 4 || list[0].Pos.String() != "l.txt:1" || list[1].Pos.String() != "l.txt:2" ||
		list[2].Pos.String() != "l.txt:4" || list[3].Pos.String() != "l.txt:5" {
		t.Errorf("errors: %v", err)
	}
	// An indented line after a broken line belongs to no link.
	if len(out) != 1 || out[0].Dev != "eth1" || out[0].MTU != 1400 || out[0].Kind != "" {
		t.Errorf("read %+v", out)
	}
	out, err = HairpinFiles(strings.NewReader("/sys/class/net/veth1/brport/hairpin_mode:2\n/sys/class/net/veth2/brport/hairpin_mode:1\n"), "h.txt")
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.String() != "h.txt:1" || len(out) != 1 || out[0].Dev != "veth2" {
		t.Errorf("hairpin: %v, %+v", err, out)
	}
	// head's headers name the file of the value below.
	out, err = HairpinFiles(strings.NewReader("==> /sys/class/net/veth1/brport/hairpin_mode <==\n0\n\n==> /sys/class/net/veth2/brport/hairpin_mode <==\n1\n"), "h.txt")
	if err != nil || len(out) != 2 || *out[0].Hairpin || !*out[1].Hairpin || out[1].Pos.Line != 4 {
		t.Errorf("head: %v, %+v", err, out)
	}
	if _, err := LinksJSON(strings.NewReader(`[{"ifname":"eth0","mtu":"big"}]`), "j.json"); err == nil || !strings.Contains(err.Error(), "j.json:1 (entry 1)") {
		t.Errorf("bad mtu: %v", err)
	}
}

// An entry whose ifname is not a name (an array, null, an object, an
// empty string) is an error at its position, and gives no link; the
// entries around it are read.
func TestLinksJSONBadName(t *testing.T) {
	for _, v := range []string{`[]`, `null`, `{}`, `""`} {
		in := `[{"ifname":"eth0","mtu":1500},{"ifname":` + v + `,"mtu":1500},{"ifname":"eth1","mtu":9000}]`
		links, err := LinksJSON(strings.NewReader(in), "j.json")
		if err == nil || !strings.Contains(err.Error(), "j.json:1 (entry 2)") || !strings.Contains(err.Error(), "ifname") {
			t.Errorf("ifname %s: err = %v, want one at entry 2 naming ifname", v, err)
		}
		if len(links) != 2 || links[0].Dev != "eth0" || links[1].Dev != "eth1" {
			t.Errorf("ifname %s: links %+v, want eth0 and eth1", v, links)
		}
	}
}

// An ip -j array cut before its closing ] is said to be cut, at its last
// line; the entries read before are kept.
func TestLinksJSONCut(t *testing.T) {
	in := "[{\"ifname\":\"eth0\",\"mtu\":1500},\n{\"ifname\":\"eth1\",\"mtu\":9000}\n"
	links, err := LinksJSON(strings.NewReader(in), "j.json")
	if err == nil || !strings.Contains(err.Error(), "j.json:2") || !strings.Contains(err.Error(), "no closing ]") || !errors.Is(err, format.ErrTruncated) {
		t.Errorf("err = %v, want a truncation at j.json:2", err)
	}
	if len(links) != 2 {
		t.Errorf("links %+v, want eth0 and eth1", links)
	}
	if _, err := LinksJSON(strings.NewReader(in+"]\n"), "j.json"); err != nil {
		t.Errorf("whole array: %v", err)
	}
}

func FuzzLinks(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{linkDir + "ip-link.txt", linkDir + "ip-d-link.txt", linkDir + "bridge-d-link.txt",
		linkDir + "brport-hairpin-grep.txt", linkDir + "ip-j-d-link.txt"})
	f.Fuzz(func(t *testing.T, in string) {
		for _, read := range []func(r *strings.Reader, name string) ([]model.Link, error){
			func(r *strings.Reader, n string) ([]model.Link, error) { return Links(r, n) },
			func(r *strings.Reader, n string) ([]model.Link, error) { return LinksJSON(r, n) },
			func(r *strings.Reader, n string) ([]model.Link, error) { return HairpinFiles(r, n) },
		} {
			out, err := read(strings.NewReader(in), "fuzz.txt")
			parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
			for _, l := range out {
				if l.Pos.Line == 0 || l.Dev == "" || l.MTU < 0 {
					t.Fatalf("bad link: %+v", l)
				}
			}
		}
	})
}

// FuzzBridge holds the bridge ports' settings to a target of their own:
// bridge -d link show and the brport hairpin_mode files, every link named
// and at a line.
func FuzzBridge(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{linkDir + "bridge-d-link.txt", linkDir + "brport-hairpin-grep.txt"})
	f.Add("==> /sys/class/net/veth1/brport/hairpin_mode <==\n0\n\n==> /sys/class/net/veth2/brport/hairpin_mode <==\n1\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, read := range []func(r *strings.Reader, name string) ([]model.Link, error){
			func(r *strings.Reader, n string) ([]model.Link, error) { return Links(r, n) },
			func(r *strings.Reader, n string) ([]model.Link, error) { return HairpinFiles(r, n) },
		} {
			out, err := read(strings.NewReader(in), "fuzz.txt")
			parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
			for _, l := range out {
				if l.Pos.File != "fuzz.txt" || l.Pos.Line == 0 || l.Dev == "" {
					t.Fatalf("bad link: %+v", l)
				}
			}
		}
	})
}
