package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// timelessFiles are the same handshakes as tcpdump -t prints them,
// without times, and as tcpdump -ttt does, with them.
var timelessFiles = []struct {
	file  string
	timed bool
}{
	{"handshakes.tcpdump-t.txt", false},
	{"handshakes.tcpdump-ttt.txt", true},
}

// TestTimelessText checks that text pasted from tcpdump -t, whose lines
// have no times, gives none in any output: no start in the CSV, no
// start, end or segment times in JSON, no first or last among a
// finding's facts, rather than Go's zero time (0001-01-01). The same
// handshakes with times (tcpdump -ttt) give them all.
func TestTimelessText(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "captures", "text")
	for _, tc := range timelessFiles {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			outs := map[string]string{}
			for _, args := range [][]string{
				{"flows", "-o", "csv", path},
				{"flows", "-o", "json", path},
				{"flows", "--width", "0", path},
				{"analyze", "-o", "json", path},
				{"analyze", "-o", "sarif", path},
				{"analyze", "-o", "html", path},
				{"analyze", "-o", "text", path},
			} {
				_, out, stderr := runCLI(t, args...)
				if out == "" {
					t.Fatalf("%s: no output:\n%s", strings.Join(args[:3], " "), stderr)
				}
				if strings.Contains(out, "0001-01-01") {
					t.Errorf("%s: Go's zero time in the output:\n%s", strings.Join(args[:3], " "), out)
				}
				outs[strings.Join(args[:3], " ")] = out
			}

			rows, err := csv.NewReader(strings.NewReader(outs["flows -o csv"])).ReadAll()
			if err != nil || len(rows) != 12 || rows[0][1] != "start" {
				t.Fatalf("flows -o csv: %d rows, %v, want a header and 11 attempts", len(rows), err)
			}
			for _, r := range rows[1:] {
				if (r[1] != "") != tc.timed {
					t.Errorf("flows -o csv: start %q of %s", r[1], r[0])
				}
			}

			var flows struct {
				Endpoints []map[string]any `json:"endpoints"`
				Attempts  []map[string]any `json:"attempts"`
			}
			if err := json.Unmarshal([]byte(outs["flows -o json"]), &flows); err != nil || len(flows.Attempts) != 11 {
				t.Fatalf("flows -o json: %d attempts, %v", len(flows.Attempts), err)
			}
			// Port 80's three handshakes: a median time to SYN/ACK from
			// three timed ones, or none (not one of 0).
			web := flows.Endpoints[0]
			med, hasMed := web["median_synack_ms"].(float64)
			if web["server"] != "10.99.0.2:80" || web["synack_timed"] != map[bool]float64{true: 3, false: 0}[tc.timed] ||
				hasMed != tc.timed || (tc.timed && med <= 0) {
				t.Errorf("flows -o json: first endpoint %v", web)
			}
			for _, a := range flows.Attempts {
				_, start := a["start"]
				_, end := a["end"]
				syn, _ := a["syn"].([]any)
				_, synTime := syn[0].(map[string]any)["time"]
				if _, frame := syn[0].(map[string]any)["frame"]; frame {
					t.Errorf("flows -o json: attempt at %v: a frame number for a line of text: %v", a["pos"], syn[0])
				}
				if start != tc.timed || end != tc.timed || synTime != tc.timed {
					t.Errorf("flows -o json: attempt at %v: start %v, end %v, SYN time %v; want %v", a["pos"], start, end, synTime, tc.timed)
				}
			}

			var report struct {
				Findings []struct {
					Rule  string         `json:"rule"`
					Facts map[string]any `json:"facts"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(outs["analyze -o json"]), &report); err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, f := range report.Findings {
				if f.Rule != "syn-refused" {
					continue
				}
				refused++
				_, first := f.Facts["first"]
				_, last := f.Facts["last"]
				if first != tc.timed || last != tc.timed {
					t.Errorf("syn-refused facts %v: first %v, last %v, want %v", f.Facts, first, last, tc.timed)
				}
			}
			if refused != 2 {
				t.Errorf("%d syn-refused findings, want 2 (ports 81 and 8081)", refused)
			}
		})
	}
}

// TestTimelessWindow checks that --since and --until agree on attempts
// without a time: both leave them out, and say so, in every output form
// (the CSV is handed on as it is read, the others built whole or from a
// temporary file). The same handshakes with times are kept by a window
// that holds them.
func TestTimelessWindow(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "captures", "text")
	for _, tc := range timelessFiles {
		path := filepath.Join(dir, tc.file)
		for _, window := range [][]string{
			{"--since", "+0s"},
			{"--until", "+1h"},
			{"--since", "0000-01-01T00:00:00Z", "--until", "0000-12-31T00:00:00Z"},
		} {
			for _, form := range []string{"csv", "json", "table"} {
				args := append([]string{"flows", "-o", form}, window...)
				args = append(args, path)
				name := tc.file + " " + strings.Join(args[1:len(args)-1], " ")
				_, out, stderr := runCLI(t, args...)
				var n int
				switch form {
				case "csv":
					rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					n = len(rows) - 1
				case "json":
					var flows struct {
						Attempts []map[string]any `json:"attempts"`
					}
					if err := json.Unmarshal([]byte(out), &flows); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					n = len(flows.Attempts)
				default:
					n = 1
					if strings.Contains(out, "No connection attempts match.") {
						n = 0
					}
				}
				warned := strings.Contains(stderr, ":1: 11 attempts without a time (text pasted without times") && strings.Contains(stderr, window[0]+" ")
				if tc.timed {
					if n == 0 || warned {
						t.Errorf("%s: %d attempts (want them kept), warned %v:\n%s", name, n, warned, stderr)
					}
				} else if n != 0 || !warned {
					t.Errorf("%s: %d attempts (want none), warned %v:\n%s%s", name, n, warned, out, stderr)
				}
			}
		}
	}
}

// TestTimelessWindowCounts checks that the warning of attempts left out
// for having no time counts those the other filters keep, and only them:
// none when the other filters leave every attempt out, none for a file of
// text without times and without TCP, and the attempts of a file whose
// text without times is followed by text with them.
func TestTimelessWindowCounts(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "captures", "text")
	untimed := filepath.Join(dir, "handshakes.tcpdump-t.txt")
	var withTCP, noTCP, mixed strings.Builder
	for _, l := range strings.SplitAfter(string(readFile(t, untimed)), "\n") {
		if strings.Contains(l, "Flags [") {
			withTCP.WriteString(l)
		} else {
			noTCP.WriteString(l)
		}
	}
	mixed.WriteString(withTCP.String())
	mixed.Write(readFile(t, filepath.Join(dir, "handshakes.tcpdump.txt")))
	tmp := t.TempDir()
	noTCPPath, mixedPath := filepath.Join(tmp, "icmp-t.txt"), filepath.Join(tmp, "mixed.txt")
	for path, text := range map[string]string{noTCPPath: noTCP.String(), mixedPath: mixed.String()} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file named by an address: under --anonymize, the warning names it
	// as the output's rows do (the same key gives the same tokens).
	named := filepath.Join(tmp, "anon", "10.99.0.2.txt")
	if err := os.MkdirAll(filepath.Dir(named), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(named, readFile(t, untimed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCLI(t, "flows", "--anonymize-key", "k", "-o", "csv", named)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 12 {
		t.Fatalf("flows --anonymize-key: %d rows, %v", len(rows), err)
	}
	_, _, stderr := runCLI(t, "flows", "--anonymize-key", "k", "--since", "+0s", "-o", "csv", named)
	if want := rows[1][0] + ": 11 attempts without a time"; !strings.Contains(stderr, want) || strings.Contains(rows[1][0], "10.99.0.2") {
		t.Errorf("flows --anonymize-key: want the warning %q, from the row of %s:\n%s", want, rows[1][0], stderr)
	}
	for _, tc := range []struct {
		args []string
		want string // the warning, "" for none
	}{
		{[]string{"--port", "80", "--until", "+1s", untimed}, untimed + ":1: 3 attempts without a time"},
		{[]string{"--port", "81", "--since", "+0s", untimed}, untimed + ":37: 1 attempt without a time (text pasted without times, as tcpdump -t prints it, or a first packet read without its corrupt time): --since left it out"},
		{[]string{"--state", "RSTR", "--until", "+1s", untimed}, ""},
		{[]string{"--host", "192.0.2.1", "--since", "+0s", untimed}, ""},
		{[]string{"--since", "+0s", noTCPPath}, ""},
		{[]string{"--since", "+0s", mixedPath}, mixedPath + ":1: "},
	} {
		for _, form := range []string{"csv", "json"} {
			args := append([]string{"flows", "-o", form}, tc.args...)
			_, _, stderr := runCLI(t, args...)
			if got := strings.Contains(stderr, "without a time"); got != (tc.want != "") || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s: want %q, got:\n%s", strings.Join(args, " "), tc.want, stderr)
			}
		}
	}
}

// TestUndatedWindow checks that a time window of dates leaves out the
// attempts of text timed by the time of day alone (tcpdump's default,
// whose times count from year 0), and says so, rather than counting an
// offset (+1h) from year 0 and leaving out every attempt with a date;
// that a window of times of day does the same the other way round, and
// one of both kinds is refused; and that such text read alone is windowed
// by its own times.
func TestUndatedWindow(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"handshakes.pcap", "text/handshakes.tcpdump.txt"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), readFile(t, fixture("captures/"+f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pcap, text := filepath.Join(dir, "handshakes.pcap"), filepath.Join(dir, "handshakes.tcpdump.txt")
	// Bounds of the two kinds hold no time: a usage error, before the
	// read for two times, after it for an offset, which counts from the
	// first packet with a date.
	for _, window := range [][]string{
		{"--since", "2026-11-23T13:11:44Z", "--until", "0000-01-01T13:11:45Z"},
		{"--since", "0000-01-01T13:11:45Z", "--until", "+1s"},
	} {
		args := append(append([]string{"flows", "-o", "csv"}, window...), dir)
		if code, out, stderr := runCLI(t, args...); code != exitUsage || out != "" || !strings.Contains(stderr, "one has a date and the other lies in year 0") {
			t.Errorf("%s: exit %d, want %d:\n%s%s", strings.Join(args, " "), code, exitUsage, out, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		from string // the file every attempt kept is from
		want string // the warning
	}{
		{[]string{"--until", "+1h", dir}, pcap, text + ":1: 11 attempts timed in year 0, without a date"},
		{[]string{"--since", "2020-01-01T00:00:00Z", dir}, pcap, text + ":1: 11 attempts timed in year 0, without a date (text with times of day, as tcpdump prints them by default, or times counted from its first packet): --since, with a date, left them out"},
		{[]string{"--until", "0000-01-02T00:00:00Z", dir}, text, pcap + "#frame=1: 11 attempts with dated times: --until, in year 0 without a date, left them out"},
		{[]string{"--since", "+0s", text}, text, ""},
	} {
		for _, form := range []string{"csv", "json"} {
			args := append([]string{"flows", "-o", form}, tc.args...)
			_, out, stderr := runCLI(t, args...)
			var wheres []string
			if form == "csv" {
				rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil {
					t.Fatalf("%s: %v", strings.Join(args, " "), err)
				}
				for _, r := range rows[1:] {
					wheres = append(wheres, r[0])
				}
			} else {
				var flows struct {
					Attempts []struct {
						Pos struct {
							File string `json:"file"`
						} `json:"pos"`
					} `json:"attempts"`
				}
				if err := json.Unmarshal([]byte(out), &flows); err != nil {
					t.Fatalf("%s: %v", strings.Join(args, " "), err)
				}
				for _, a := range flows.Attempts {
					wheres = append(wheres, a.Pos.File)
				}
			}
			from := 0
			for _, w := range wheres {
				if strings.HasPrefix(w, tc.from) {
					from++
				}
			}
			warned := strings.Contains(stderr, "warning:")
			if len(wheres) != 11 || from != 11 || warned != (tc.want != "") || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s: %d attempts, %d from %s; want 11 from it, and the warning %q:\n%s", strings.Join(args, " "), len(wheres), from, tc.from, tc.want, stderr)
			}
		}
	}
}
