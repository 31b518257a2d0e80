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
	"parse/testdata/conntrack/proc-stat-nf_conntrack-full.txt", "fixtures/field/conntrack-drops--k8s-56903-kivagant/conntrack-S.txt"}

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

// conntrack -S and /proc/net/stat/nf_conntrack as published and as
// conntrack-tools 1.4.7 on kernel 6.18 prints them.
func TestConntrackStatsRealFixtures(t *testing.T) {
	keys := []string{"insert", "insert_failed", "drop", "error", "search_restart"}
	// telegraf #8955: cpu= padded, a $ prompt first, trailing spaces.
	out := parsetest.ReadFile(t, "fixtures/real/conntrack/telegraf-issue8955_conntrack-S_per-cpu-padded.txt", ConntrackStats)
	if len(out) != 8 || out[0].Pos.Line != 2 || out[7].CPU != 7 || out[7].Pos.Line != 9 {
		t.Fatalf("telegraf: %s", statLines(out))
	}
	for _, st := range out {
		failed := st.Counters["insert_failed"] != 0 || st.Counters["drop"] != 0
		if failed != (st.CPU == 7) || st.Counters["ignore"] == 0 {
			t.Errorf("telegraf: %s", statLines([]model.ConntrackStats{st}, append(keys, "ignore")...))
		}
	}
	// google/nftables #138: idle, invalid only on cpu=1.
	out = parsetest.ReadFile(t, "fixtures/real/conntrack/google-nftables-issue138_conntrack-S_idle-4cpu.txt", ConntrackStats)
	parsetest.CheckLines(t, "nftables-138", statLines(out, "invalid", "insert_failed", "search_restart"), []string{
		"1 cpu=0 invalid=0 insert_failed=0 search_restart=0",
		"2 cpu=1 invalid=107 insert_failed=0 search_restart=1",
		"3 cpu=2 invalid=0 insert_failed=0 search_restart=0",
		"4 cpu=3 invalid=0 insert_failed=0 search_restart=0",
	})
	// 1.4.7: cpu=N padded to 4 then a TAB, the newer clash_resolve and
	// chaintoolong.
	out = parsetest.ReadFile(t, "fixtures/real/local/conntrack/local_conntrack-S_v1.4.7_tab-after-cpu.txt", ConntrackStats)
	parsetest.CheckLines(t, "1.4.7", statLines(out, "insert", "clash_resolve", "chaintoolong"), []string{
		"1 cpu=0 insert=0 clash_resolve=0 chaintoolong=0",
		"2 cpu=1 insert=1 clash_resolve=0 chaintoolong=0",
	})
	if len(out[0].Counters) != 10 {
		t.Errorf("1.4.7: %d counters, want 10", len(out[0].Counters))
	}
	// The /proc table of kernel 6.18: 17 hex columns, clashres and
	// chainlength named as conntrack -S names them.
	out = parsetest.ReadFile(t, "fixtures/real/local/conntrack/local_proc-net-stat-nf_conntrack_hex.txt", ConntrackStats)
	parsetest.CheckLines(t, "proc 6.18", statLines(out, "entries", "insert", "clash_resolve", "chaintoolong", "error"), []string{
		"2 cpu=0 entries=6 insert=0 clash_resolve=0 chaintoolong=0 error=0",
		"3 cpu=1 entries=6 insert=1 clash_resolve=0 chaintoolong=0 error=0",
	})
	if len(out[0].Counters) != 17 {
		t.Errorf("proc: %d counters, want 17", len(out[0].Counters))
	}
}

// conntrack -S as conntrack-tools 1.4.4 and older print it: cpu=N padded
// then a TAB, the counters of kernels before 4.x (searched, new, delete,
// delete_list) in their order.
func TestConntrackStatsOld(t *testing.T) {
	in := "cpu=0     \tsearched=1731 found=2218016 new=27806 invalid=11 ignore=0 delete=27804 delete_list=27804 insert=27806 insert_failed=3 drop=3 early_drop=0 error=0 search_restart=0 \n" +
		"cpu=1     \tsearched=972 found=1306312 new=15221 invalid=4 ignore=0 delete=15220 delete_list=15220 insert=15221 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=0 \n"
	out, err := ConntrackStats(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "1.4.4", statLines(out, "searched", "new", "delete_list", "insert_failed", "drop"), []string{
		"1 cpu=0 searched=1731 new=27806 delete_list=27804 insert_failed=3 drop=3",
		"2 cpu=1 searched=972 new=15221 delete_list=15220 insert_failed=0 drop=0",
	})
	if sc := ConntrackStatsFormat.Sniff("s.txt", []byte(in)); sc < 80 {
		t.Errorf("sniff %d", sc)
	}
}

// /proc/net/stat/nf_conntrack of kernels before 4.x: searched, new, delete
// and delete_list columns, icmp_error named error as conntrack -S names it.
func TestConntrackStatsOldProcTable(t *testing.T) {
	in := "entries  searched found new invalid ignore delete delete_list insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n" +
		"000003a1  00000000 0002a3c4 00001c2b 0000000b 00000000 00001c27 00001c27 00001c2b 00000002 00000002 00000000 00000000  00000000 00000000 00000000 00000000\n" +
		"000003a1  00000000 00017c10 00000f41 00000004 00000000 00000f40 00000f40 00000f41 00000000 00000000 00000000 00000001  00000000 00000000 00000000 00000000\n"
	out, err := ConntrackStats(strings.NewReader(in), "stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "old /proc table", statLines(out, "entries", "new", "delete_list", "insert_failed", "drop", "error"), []string{
		"2 cpu=0 entries=929 new=7211 delete_list=7207 insert_failed=2 drop=2 error=0",
		"3 cpu=1 entries=929 new=3905 delete_list=3904 insert_failed=0 drop=0 error=1",
	})
	if sc := ConntrackStatsFormat.Sniff("stat.txt", []byte(in)); sc < 80 {
		t.Errorf("sniff %d", sc)
	}
}

// conntrack-tools 1.4.4's conntrack -S, from a real ticket (kubectl exec
// into a Pod without CAP_NET_ADMIN): one record, the sum over the CPUs;
// the tool's complaint after it is not a counter.
func TestConntrackStatsList(t *testing.T) {
	const rel = "fixtures/field/conntrack-drops--k8s-56903-kivagant/conntrack-S.txt"
	out := parsetest.ReadFile(t, rel, ConntrackStats)
	if len(out) != 1 {
		t.Fatalf("%d records: %+v", len(out), out)
	}
	st := out[0]
	if st.CPU != -1 || st.Pos.Line != 2 || len(st.Counters) != 17 || st.Counters["entries"] != 87 || st.Counters["found"] != 3651207 ||
		st.Counters["insert_failed"] != 0 || !hasCounter(st.Counters, "drop") || st.Counters["error"] != 0 {
		t.Errorf("record %+v", st)
	}
	if sc := ConntrackStatsFormat.Sniff("x", []byte("entries 3\nnew 4\n")); sc != 0 {
		t.Errorf("two name-value lines without insert_failed score %d", sc)
	}
}

func hasCounter(m map[string]uint64, k string) bool {
	_, ok := m[k]
	return ok
}
