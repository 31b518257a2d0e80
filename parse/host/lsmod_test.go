package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// NVIDIA/NemoClaw#2418: `lsmod | grep br_netfilter` that printed nothing,
// with the reporter's "(empty)": a listing of no module for the pattern.
func TestLsmodReal(t *testing.T) {
	const file = "fixtures/field/nat-reply-untranslated--nemoclaw-2418/lsmod.txt"
	out := parsetest.ReadFile(t, file, Lsmod)
	var got []string
	for _, m := range out {
		got = append(got, fmt.Sprintf("%d %s %q %v", m.Pos.Line, m.Pattern, m.Command, m.Loaded))
	}
	parsetest.CheckLines(t, file, got, []string{`1 br_netfilter "lsmod | grep br_netfilter" []`})
}

// A whole listing, a grep that found the module, and a word among the
// modules, reported at its line.
func TestLsmodErrors(t *testing.T) {
	in := "Module                  Size  Used by\nbr_netfilter           32768  0\nbridge                311296  1 br_netfilter\n" +
		"oops\n$ sudo lsmod | grep -w ip_vs\nip_vs                 176128  6 ip_vs_rr\n"
	out, err := Lsmod(strings.NewReader(in), "m.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "m.txt:4" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Pattern != "" || len(out[0].Loaded) != 2 || out[1].Pattern != "ip_vs" || out[1].Loaded[0] != "ip_vs" {
		t.Errorf("got %+v", out)
	}
}

func FuzzLsmod(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/nat-reply-untranslated--nemoclaw-2418/lsmod.txt"})
	f.Add("# lsmod | grep '\nModule Size Used by\nx -1 0\n(empty)\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Lsmod(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, m := range out {
			if m.Pos.Line == 0 || m.Loaded == nil {
				t.Fatalf("bad listing: %+v", m)
			}
		}
		sniffLsmod("fuzz.txt", []byte(in))
	})
}
