package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

const nstatDir = "parse/testdata/nstat/"

// counterOf returns the counter named name in out, with ok false when
// there is none.
func counterOf(out []model.Counter, name string) (model.Counter, bool) {
	for _, c := range out {
		if c.Name == name {
			return c, true
		}
	}
	return model.Counter{}, false
}

// The real outputs of parse/testdata/make-nstat.sh: a node whose strict
// reverse-path filter dropped the client's three pings.
func TestNstatReal(t *testing.T) {
	for _, c := range []struct {
		file  string
		n     int // counters listed: every line but the header
		line  int // the line of TcpExtIPReversePathFilter
		other string
		value uint64
	}{
		{"nstat.txt", 29, 27, "IpInReceives", 4},
		{"nstat-a.txt", 35, 33, "IpInReceives", 5},
		{"nstat-az.txt", 395, 244, "TcpExtTCPSynRetrans", 0},
		{"nstat-az-rpf.txt", 1, 2, "", 0},
	} {
		out := parsetest.ReadFile(t, nstatDir+c.file, Nstat)
		if len(out) != c.n {
			t.Errorf("%s: %d counters, want %d", c.file, len(out), c.n)
		}
		rpf, ok := counterOf(out, "TcpExtIPReversePathFilter")
		if !ok || rpf.Value != 3 || rpf.Pos.Line != c.line || rpf.Pos.File != c.file {
			t.Errorf("%s: TcpExtIPReversePathFilter %+v, want 3 at line %d", c.file, rpf, c.line)
		}
		if c.other != "" {
			if o, ok := counterOf(out, c.other); !ok || o.Value != c.value {
				t.Errorf("%s: %s %+v, want %d", c.file, c.other, o, c.value)
			}
		}
		for i, o := range out {
			if o.Pos.Line != i+2 { // one counter a line, below #kernel
				t.Errorf("%s: counter %d (%s) at line %d", c.file, i, o.Name, o.Pos.Line)
				break
			}
		}
	}
}

// make-local.sh's ping from a source the router cannot route back, then
// nstat on the router, in one file: the counter is read, the ping's lines
// are reported.
func TestNstatAfterPing(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/real/local/multi-file/local_ping-spoofed-source_rp_filter-drop.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Nstat(bytes.NewReader(b), "p.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "p.txt:1 p.txt:3 p.txt:4" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 1 || out[0].Name != "TcpExtIPReversePathFilter" || out[0].Value != 2 || out[0].Pos.Line != 7 {
		t.Errorf("read %+v", out)
	}
}

func TestNstatPromptAndErrors(t *testing.T) {
	in := "root@node-1:~# nstat -az TcpExtIPReversePathFilter\n#kernel\nTcpExtIPReversePathFilter 18446744073709551615 0.0\n" +
		"TcpExtListenDrops x 0.0\nIp: Forwarding 1\nTcpExtListenOverflows 2\n"
	out, err := Nstat(strings.NewReader(in), "n.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "n.txt:4 n.txt:5" {
		t.Errorf("errors at %q: %v", got, err)
	}
	var got []string
	for _, c := range out {
		got = append(got, fmt.Sprintf("%d %s %s %d", c.Pos.Line, c.Node, c.Name, c.Value))
	}
	parsetest.CheckLines(t, "n.txt", got, []string{
		"3 node-1 TcpExtIPReversePathFilter 18446744073709551615",
		"6 node-1 TcpExtListenOverflows 2",
	})
	var list model.ErrorList
	if !errors.As(err, &list) || !strings.Contains(list[0].Error(), "expected a counter line") {
		t.Errorf("error: %v", err)
	}
}

func FuzzNstat(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{nstatDir + "nstat.txt", nstatDir + "nstat-az-rpf.txt", nstatDir + "netstat-s.txt"})
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Nstat(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, c := range out {
			if c.Pos.Line == 0 || c.Name == "" {
				t.Fatalf("bad counter: %+v", c)
			}
		}
	})
}
