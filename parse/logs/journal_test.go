package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

const localJournal = "fixtures/real/local/journald/"

// journalctl -o short in seven locales (fixtures/real/local/journald, the
// same entries one month apart): every locale's month names read, the
// events those of the C locale.
func TestJournalLocales(t *testing.T) {
	c, err := readReal(t, localJournal+"local_journalctl-o-short_C.txt")
	if err != nil || len(c) != 7 {
		t.Fatalf("C locale: %d events, %v", len(c), err)
	}
	var months []time.Month
	for _, ev := range c {
		months = append(months, ev.Time.Month())
		if ev.Node != "nm-real-node" || ev.Source != "conntrack" || ev.Fields["pid"] != "4242" || ev.Time.Year() != 0 {
			t.Errorf("C locale: %s", eventLine(ev))
		}
	}
	if got := months; got[0] != time.December || got[1] != time.January || got[2] != time.March || got[6] != time.July {
		t.Errorf("months %v", got)
	}
	for _, loc := range []string{"de_DE", "es_ES", "fr_FR", "ja_JP", "ru_RU", "zh_CN"} {
		evs, err := readReal(t, localJournal+"local_journalctl-o-short_LC_ALL-"+loc+".txt")
		if err != nil || len(evs) != len(c) {
			t.Errorf("%s: %d events, %v", loc, len(evs), err)
			continue
		}
		for i := range evs {
			if got, want := eventLine(evs[i]), eventLine(c[i]); got != want {
				t.Errorf("%s event %d:\n got %s\nwant %s", loc, i, got, want)
			}
		}
	}
}

// The dated forms of the same journal: short-iso, short-iso-precise,
// short-unix and -o json give the same instants; short-precise the same
// clock without the year; short-iso in TZ=Europe/Berlin the same instants.
func TestJournalTimes(t *testing.T) {
	read := func(name string) []model.LogEvent {
		evs, err := readReal(t, localJournal+name)
		if err != nil || len(evs) == 0 {
			t.Fatalf("%s: %d events, %v", name, len(evs), err)
		}
		return evs
	}
	precise := read("local_journalctl-o-short-iso-precise.txt")
	if len(precise) != 7 || !precise[1].Time.Equal(time.Date(2026, 1, 30, 21, 9, 8, 370123000, time.UTC)) {
		t.Fatalf("short-iso-precise: %s", eventLines(precise))
	}
	for _, name := range []string{"local_journalctl-o-short-unix.txt", "local_journalctl-o-json.txt"} {
		evs := read(name)
		if len(evs) != 7 {
			t.Fatalf("%s: %d events", name, len(evs))
		}
		for i := range evs {
			if !evs[i].Time.Equal(precise[i].Time) || evs[i].Node != "nm-real-node" || evs[i].Source != "conntrack" ||
				evs[i].Message != precise[i].Message || evs[i].Fields["pid"] != "4242" {
				t.Errorf("%s event %d: %s, want the time and message of %s", name, i, eventLine(evs[i]), eventLine(precise[i]))
			}
		}
	}
	iso := read("local_journalctl-o-short-iso.txt")
	berlin := read("local_journalctl-o-short-iso_TZ-Europe-Berlin.txt")
	if len(iso) != 7 || len(berlin) != 3 {
		t.Fatalf("%d and %d events", len(iso), len(berlin))
	}
	for i, ev := range berlin {
		if !ev.Time.Equal(iso[4+i].Time) {
			t.Errorf("Berlin %d: %v, want %v", i, ev.Time, iso[4+i].Time)
		}
	}
	short := read("local_journalctl-o-short-precise.txt")
	for i := range short {
		p := precise[i].Time
		want := time.Date(0, p.Month(), p.Day(), p.Hour(), p.Minute(), p.Second(), p.Nanosecond(), time.UTC)
		if !short[i].Time.Equal(want) {
			t.Errorf("short-precise %d: %v, want %v", i, short[i].Time, want)
		}
	}
	mono := read("local_journalctl-o-short-monotonic.txt")
	if len(mono) != 7 || mono[0].Fields["uptime"] != "91.234567" || mono[0].Source != "conntrack" || mono[0].Node != "nm-real-node" ||
		!mono[0].Time.IsZero() || mono[0].Message != precise[0].Message {
		t.Errorf("short-monotonic: %s", eventLines(mono))
	}
	json := read("local_journalctl-o-json.txt")
	if json[0].Level != "info" || json[0].Fields["unit"] != "conntrack-events.service" {
		t.Errorf("json: %s", eventLine(json[0]))
	}
}

// RFC 3164 lines as a collector kept them, <PRI> and all, the first one
// still behind a Markdown quote marker.
func TestSyslogPRI(t *testing.T) {
	evs, err := readReal(t, "fixtures/real/syslog/kubernetes-issue75477_rfc3164-pri-prefixed-kubelet.log")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	for _, ev := range evs {
		if ev.Node != "kn-east-07" || ev.Source != "kubelet" || ev.Level != "E" || ev.Fields["priority"] != "30" ||
			ev.Fields["caller"] != "reflector.go:322" || !strings.Contains(ev.Message, "connection refused") {
			t.Errorf("%s", eventLine(ev))
		}
	}
}

// A line of no known shape in a localized journal is a warning at its
// line; the lines after it are read.
func TestJournalBadLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), localJournal+"local_journalctl-o-short_LC_ALL-fr_FR.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	in := strings.Join(lines[:3], "") + "déc. 99 garbled\n" + strings.Join(lines[3:], "")
	evs, err := Logs(strings.NewReader(in), "fr.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "fr.txt:4" {
		t.Errorf("warnings at %s", got)
	}
	if len(evs) != 7 || evs[3].Pos.Line != 5 || evs[6].Pos.Line != 8 {
		t.Errorf("events:\n%s", eventLines(evs))
	}
}

func FuzzJournal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testutil.Root(), localJournal+"*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("<30>Mar 19 08:02:43 h k[1]: x\n> 12月 31 10:40:01 h p: y\n 1월 2 03:04:05 h p[2]: z\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := Logs(strings.NewReader(in), "j.txt")
		parsetest.CheckFuzzErrors(t, err, "j.txt")
		last := 0
		for _, ev := range evs {
			if ev.Pos.File != "j.txt" || ev.Pos.Line <= 0 || ev.Pos.Line < last {
				t.Fatalf("event position %v after line %d", ev.Pos, last)
			}
			last = ev.Pos.Line
		}
		for _, fm := range []*format.Format{KlogFormat, JournalFormat} {
			if s := fm.Sniff("j.txt", []byte(in)); s < 0 || s > 100 {
				t.Fatalf("%s sniff %d", fm.Name, s)
			}
		}
	})
}

// minikube logs (fixtures/real): "* " before every line, "==> kubelet <=="
// before each component's log; head and tail of several log files name
// each file's component, and a container's.
func TestLogSections(t *testing.T) {
	evs, err := readReal(t, "fixtures/real/journald/minikube-issue6823_minikube-logs_star-prefixed-journal.txt")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if evs[0].Source != "" || evs[0].Level != "E" || evs[0].Fields["caller"] != "reflector.go:307" ||
		evs[2].Source != "kubelet" || evs[2].Node != "minikube" || evs[2].Pos.Line != 6 {
		t.Errorf("events:\n%s", eventLines(evs))
	}
	in := `==> /var/log/kube-proxy.log <==
E1123 13:19:08.532911       1 reflector.go:138] failed to list *v1.Service: i/o timeout

==> /var/log/containers/coredns-7d9c5b8f6c-m4wqs_kube-system_coredns-5a570f6c6dc14b3cacd0b404118d7428ce4f3e46621e33624834c870cb038ebf.log <==
2026-11-23T13:19:08.6Z stdout F [INFO] plugin/reload: Running configuration SHA512 = 591cf3
`
	evs, err = Logs(strings.NewReader(in), "tail.txt")
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if evs[0].Source != "kube-proxy" || evs[0].Container != "" ||
		evs[1].Source != "coredns" || evs[1].Pod != "coredns-7d9c5b8f6c-m4wqs" || evs[1].Namespace != "kube-system" || evs[1].Level != "INFO" {
		t.Errorf("events %+v", evs)
	}
}

func TestMonthNumber(t *testing.T) {
	for tok, want := range map[string]int{
		"Sep": 9, "sep": 9, "Dez": 12, "déc.": 12, "Déc.": 12, "janv.": 1, "mars": 3, "avril": 4, "juil.": 7, "août": 8,
		"ene": 1, "dic": 12, "gen": 1, "ott": 10, "out": 10, "mrt": 3, "дек": 12, "Дек": 12, "мая": 5, "нояб": 11,
		"paź": 10, "Şub": 2, "Ağu": 8, "12月": 12, "1月": 1, "3월": 3,
		"13月": 0, "0月": 0, "Foo": 0, "": 0, "September": 0, "I0915": 0,
	} {
		if got := monthNumber(tok); got != want {
			t.Errorf("monthNumber(%q) = %d, want %d", tok, got, want)
		}
	}
}

// journalctl -o verbose: the last two entries of the same journal, each a
// header (its cursor's t= the exact time) and indented fields; they read
// as the -o json entries.
func TestJournalVerbose(t *testing.T) {
	verbose, err := readReal(t, localJournal+"local_journalctl-o-verbose_last2.txt")
	if err != nil || len(verbose) != 2 {
		t.Fatalf("%d events, %v", len(verbose), err)
	}
	json, err := readReal(t, localJournal+"local_journalctl-o-json.txt")
	if err != nil || len(json) != 7 {
		t.Fatalf("json: %d events, %v", len(json), err)
	}
	for i, ev := range verbose {
		want := json[5+i]
		want.Pos.Line = 1 + 9*i
		want.Pos.File = ev.Pos.File
		if got, w := eventLine(ev), eventLine(want); got != w {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, w)
		}
	}
}

// journalctl -o short-full: the weekday, the date, the clock and the zone;
// a zone name other than UTC or GMT leaves the time out.
func TestJournalShortFull(t *testing.T) {
	in := `Mon 2026-06-01 15:05:37 UTC node1 kubelet[811]: E0601 15:05:37.850615     811 reflector.go:138] failed to list *v1.Node: connection refused
Mon 2026-06-01 15:05:38.5 UTC node1 containerd[1]: plain message
Mon 2026-06-01 17:05:39 +0200 node1 containerd[1]: offset
Mon 2026-06-01 17:05:40 CEST node1 containerd[1]: named zone
`
	evs, err := Logs(strings.NewReader(in), "full.txt")
	if err != nil || len(evs) != 4 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	want := `1 0000-06-01T15:05:37.850615Z E kubelet@node1 "failed to list *v1.Node: connection refused" {caller=reflector.go:138 pid=811}
2 2026-06-01T15:05:38.5Z  containerd@node1 "plain message" {pid=1}
3 2026-06-01T15:05:39Z  containerd@node1 "offset" {pid=1}
4 -  containerd@node1 "named zone" {pid=1}
`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
