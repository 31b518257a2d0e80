package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// probeLines formats runs as "line node tool target failed/attempts result-line".
func probeLines(out []model.ProbeRun) []string {
	var s []string
	for _, p := range out {
		s = append(s, fmt.Sprintf("%d %s %s %s %d/%d %d", p.Pos.Line, p.Node, p.Tool, p.Target, p.Failed, p.Attempts, p.Result.Line))
	}
	return s
}

// Real loops, run against a "ClusterIP" that a quarter of the time is
// DNATed to a closed port (testdata/make-probes.sh), and seed 004's own.
func TestProbesReal(t *testing.T) {
	for rel, want := range map[string]string{
		"parse/testdata/probes/nc-traditional-count.txt":       "1 toolbox nc 10.96.0.10:53 51/200 2",
		"parse/testdata/probes/nc-openbsd-lines.txt":           "1 toolbox nc 10.96.0.10:53 4/24 25",
		"parse/testdata/probes/nc-openbsd-succeeded-count.txt": "1 node1 nc 10.96.0.10:53 26/100 2",
		"fixtures/seeds/004-stale-dnat/nc-loop.txt":            "1 toolbox nc 10.178.64.10:53 257/1000 2",
	} {
		got := probeLines(parsetest.ReadFile(t, rel, Probes))
		if strings.Join(got, "\n") != want {
			t.Errorf("%s:\n%s\nwant:\n%s", rel, strings.Join(got, "\n"), want)
		}
	}
}

func TestProbesVariants(t *testing.T) {
	in := "$ ls\nnc-loop.txt\n" +
		"[root@n2 ~]# for i in {1..10}; do ncat -z -w 2 10.0.0.5 443 && echo ok || echo failed; done\n" + // per-line, own words
		"ok\nfailed\nConnection refused\n" +
		"root@n3:~# for i in $(seq 0 2 18); do nc -w1 -zv 10.0.0.6 80 2>&1; done | grep -E 'refused|timed out' | wc -l\n" +
		"3\n" +
		"root@n3:~# for i in $(seq 1 5); do nc -zv 10.0.0.7 80; done\n" +
		"Connection to 10.0.0.7 80 port [tcp/http] succeeded!\n" +
		"nc: connect to 10.0.0.7 port 80 (tcp) timed out: Operation now in progress\n"
	out, err := Probes(strings.NewReader(in), "v.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"3 n2 ncat 10.0.0.5:443 2/10 6", // each try's line (those shown): two failures
		"7 n3 nc 10.0.0.6:80 3/10 8",    // seq 0 2 18: ten tries, grep keeps failures
		"9 n3 nc 10.0.0.7:80 1/5 11",    // two lines shown of five tries
	}
	if got := probeLines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestProbesErrors(t *testing.T) {
	in := "# for x in $(seq 1 10); do nc kube-dns 53 -z; done | wc -l\n" + // a host name
		"10\n" +
		"# for x in $(seq 1 10); do nc -z 10.0.0.1; done | wc -l\n" + // no port
		"# for x in $(seq 1 10); do nc -z 10.0.0.1 53; done | wc -l\n" + // counted, no grep
		"# for x in $(seq 1 10); do nc -z 10.0.0.1 53 2>&1 | grep -v open; done | wc -l\n" +
		"lots\n" +
		"# for x in $(seq 1 10); do nc -z 10.0.0.1 53 2>&1 | grep -v open; done | wc -l\n" +
		"11\n" +
		"# for x in $(seq 1 10); do nc -z 10.0.0.1 53 2>&1 | grep -v open; done | wc -l\n" +
		"4\n"
	out, err := Probes(strings.NewReader(in), "bad.txt")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "bad.txt:1 bad.txt:3 bad.txt:4 bad.txt:6 bad.txt:8" {
		t.Errorf("errors at %v:\n%v", at, err)
	}
	if got := probeLines(out); strings.Join(got, "|") != "9  nc 10.0.0.1:53 4/10 10" {
		t.Errorf("runs %q", got)
	}
}

func FuzzProbes(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"parse/testdata/probes/nc-traditional-count.txt", "parse/testdata/probes/nc-openbsd-lines.txt",
		"fixtures/seeds/004-stale-dnat/nc-loop.txt"})
	f.Add("# for i in {3..1}; do nc -w -z [::1] 99999; done\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Probes(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, p := range out {
			if p.Pos.Line == 0 || p.Result.Line <= p.Pos.Line || !p.Target.IsValid() || p.Attempts <= 0 || p.Failed < 0 || p.Failed > p.Attempts {
				t.Fatalf("bad run: %+v", p)
			}
		}
		sniffProbes("fuzz.txt", []byte(in))
	})
}
