package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// fuzzFormat runs one log format's parser on in: no panic, every error
// positioned in the file, every event at a line of it, in order.
func fuzzFormat(t *testing.T, fm *format.Format, in string) {
	snap := &model.Snapshot{}
	src := &format.File{Name: "fuzz.log", Format: fm.Name}
	_, err := fm.Parse(context.Background(), strings.NewReader(in), src, snap)
	parsetest.CheckFuzzErrors(t, err, "fuzz.log")
	lines := strings.Count(in, "\n") + 1
	last := 0
	for _, ev := range snap.Logs {
		if ev.Pos.File != "fuzz.log" || ev.Pos.Line < last || ev.Pos.Line < 1 || ev.Pos.Line > lines {
			t.Fatalf("event at %v after line %d (%d lines)", ev.Pos, last, lines)
		}
		last = ev.Pos.Line
	}
	if s := fm.Sniff("fuzz.log", []byte(in)); s < 0 || s > 100 {
		t.Fatalf("%s sniff %d", fm.Name, s)
	}
}

// addEvidence seeds f with the published files of fixtures/real whose
// names contain one of parts.
func addEvidence(f *testing.F, parts ...string) {
	dir := filepath.Join(testutil.Root(), "fixtures/real/incident-evidence")
	ents, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		for _, p := range parts {
			if strings.Contains(e.Name(), p) {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(string(b))
				break
			}
		}
	}
}

func FuzzCilium(f *testing.F) {
	addEvidence(f, "cilium-")
	f.Add("xx drop (Policy denied) flow 0x0 to endpoint 0, identity 2->0: 10.0.0.1:80 -> 10.0.0.2:3000 tcp SYN\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, CiliumMonitorFormat, in) })
}

func FuzzFelix(f *testing.F) {
	addEvidence(f, "felix")
	f.Add("2019-05-02 10:00:00.000 [FATAL][1] int_dataplane.go 1035: Kernel's RPF check is set to 'loose'\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, FelixLogFormat, in) })
}

func FuzzWeave(f *testing.F) {
	f.Add("Network 10.32.0.0/12 overlaps with existing route 10.0.0.0/8 on host\n")
	f.Add("FATA: 2023/07/05 05:09:36.639718 [kube-peers] Could not get peers\nINFO: 2019/10/08 09:14:30.409305 x\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, WeaveLogFormat, in) })
}

func FuzzGoLog(f *testing.F) {
	f.Add("2019/01/21 15:47:17 Starting overwatch\nRefer to our FAQ\n2023/07/05 05:09:36.639718 main.go:42: x\n")
	f.Add("2019/13/45 25:61:00 not a time\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, GoLogFormat, in) })
}

func FuzzPrettyJSON(f *testing.F) {
	f.Add("{\n  \"level\": \"error\",\n  \"msg\": \"a\n   b\"\n}\n{\n")
	f.Add("I0101 00:00:00.000000 1 x.go:1] y\n{\n  \"kind\": {\n  }\n}\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, JSONLogFormat, in) })
}
