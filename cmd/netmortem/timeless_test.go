package main

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// TestTimelessText checks that text pasted from tcpdump -t, whose lines
// have no times, gives none in any output: no start in the CSV, no
// start, end or segment times in JSON, no first or last among a
// finding's facts, rather than Go's zero time (0001-01-01). The same
// handshakes with times (tcpdump -ttt) give them all.
func TestTimelessText(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "captures", "text")
	for _, tc := range []struct {
		file  string
		timed bool
	}{
		{"handshakes.tcpdump-t.txt", false},
		{"handshakes.tcpdump-ttt.txt", true},
	} {
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
				Attempts []map[string]any `json:"attempts"`
			}
			if err := json.Unmarshal([]byte(outs["flows -o json"]), &flows); err != nil || len(flows.Attempts) != 11 {
				t.Fatalf("flows -o json: %d attempts, %v", len(flows.Attempts), err)
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
