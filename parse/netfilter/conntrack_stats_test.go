package netfilter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

var ConntrackStatsFiles = []string{"parse/testdata/conntrack/conntrack-S-idle.txt", "parse/testdata/conntrack/conntrack-S-races.txt",
	"parse/testdata/conntrack/conntrack-S-insert-failed.txt", "parse/testdata/conntrack/proc-stat-nf_conntrack.txt",
	"parse/testdata/conntrack/proc-stat-nf_conntrack-full.txt"}

func statLines(out []model.ConntrackStats, keys ...string) []string {
	var s []string
	for _, st := range out {
		l := fmt.Sprintf("%d cpu=%d", st.Pos.Line, st.CPU)
		for _, k := range keys {
			l += fmt.Sprintf(" %s=%d", k, st.Counters[k])
		}
		s = append(s, l)
	}
	return s
}

func TestConntrackStatsReal(t *testing.T) {
	keys := []string{"insert_failed", "drop", "early_drop", "clash_resolve"}
	parsetest.CheckLines(t, "conntrack-S-races.txt", statLines(parsetest.ReadFile(t, ConntrackStatsFiles[1], ConntrackStats), keys...), []string{
		"1 cpu=0 insert_failed=0 drop=0 early_drop=0 clash_resolve=189",
		"2 cpu=1 insert_failed=0 drop=0 early_drop=0 clash_resolve=200",
	})
	// The /proc table of the same run: hexadecimal, clashres named as conntrack -S names it.
	parsetest.CheckLines(t, "proc-stat-nf_conntrack.txt", statLines(parsetest.ReadFile(t, ConntrackStatsFiles[3], ConntrackStats), append(keys, "entries")...), []string{
		"2 cpu=0 insert_failed=0 drop=0 early_drop=0 clash_resolve=189 entries=3064",
		"3 cpu=1 insert_failed=0 drop=0 early_drop=0 clash_resolve=200 entries=3064",
	})
	out := parsetest.ReadFile(t, ConntrackStatsFiles[2], ConntrackStats)
	if len(out) != 4 || out[3].CPU != 3 || out[3].Counters["insert_failed"] != 190 || out[3].Counters["searched"] != 0 || len(out[0].Counters) != 13 {
		t.Errorf("conntrack 1.4.4: %+v", out)
	}
}

func TestConntrackStatsErrors(t *testing.T) {
	in := "cpu=0 found=1 insert_failed=2\ncpu=1 found=x\nentries found\n00000001 00000002\n00000001\nzzz\n"
	out, err := ConntrackStats(strings.NewReader(in), "s.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 3 || list[0].Pos.Line != 2 || list[1].Pos.Line != 5 || list[2].Pos.Line != 6 {
		t.Fatalf("errors %v", err)
	}
	if len(out) != 2 || out[1].Counters["found"] != 2 || out[1].Counters["entries"] != 1 {
		t.Errorf("read %+v", out)
	}
}

func FuzzConntrackStats(f *testing.F) {
	parsetest.AddSeedFiles(f, ConntrackStatsFiles)
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ConntrackStats(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, st := range out {
			if st.Pos.Line == 0 || st.Counters == nil {
				t.Fatalf("bad record: %+v", st)
			}
		}
		sniffConntrackStats("fuzz.txt", []byte(in))
	})
}
