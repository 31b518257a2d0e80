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
)

// grep -Hn of kube-proxy's log as pasted in kubernetes#35641
// (fixtures/field): the klog lines read at the pasted file's line numbers
// with kube-proxy, the file grep names, as their source; the iptables rules
// grep picked out of a multi-line entry are skipped.
func TestGrepLogReal(t *testing.T) {
	rel := "fixtures/field/nodeport-collision--k8s-35641/kube-proxy.log"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	if s := GrepLogFormat.Sniff(rel, b); s < 80 {
		t.Errorf("grep-n-log sniffs grep -Hn's output %d", s)
	}
	if s := KlogFormat.Sniff(rel, b); s != 0 {
		t.Errorf("klog sniffs grep -Hn's output %d", s)
	}
	evs := readGrep(t, rel, string(b))
	want := []string{
		`1 0000-01-12T09:36:31.968312Z I kube-proxy@ //  "Adding new service \"shared/b-reporter318:8008\" at 192.168.7.142:8008/TCP"`,
		`2 0000-01-12T09:36:31.969587Z I kube-proxy@ //  "added serviceInfo(shared/b-reporter318:8008): (*iptables.serviceInfo)(0xc8204f1a80)({"`,
		`3 0000-01-12T09:36:32.221463Z E kube-proxy@ //  "can't open \"nodePort for shared/b-reporter318:8008\" (:45102/tcp), skipping this nodePort: listen tcp :45102: bind: address already in use"`,
		`5 0000-01-12T09:36:32.591805Z E kube-proxy@ //  "can't open \"nodePort for shared/b-reporter318:8008\" (:45102/tcp), skipping this nodePort: listen tcp :45102: bind: address already in use"`,
		`7 0000-01-12T09:36:33.019237Z E kube-proxy@ //  "can't open \"nodePort for shared/b-reporter318:8008\" (:45102/tcp), skipping this nodePort: listen tcp :45102: bind: address already in use"`,
	}
	if len(evs) != len(want) {
		for _, ev := range evs {
			t.Log(containerLine(ev))
		}
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	for i, ev := range evs {
		if got := containerLine(ev); got != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
}

// grep -n without a file name, with -C's context lines and separators.
func TestGrepLogForms(t *testing.T) {
	in := "12-I0112 09:36:31.968312    6384 proxier.go:431] before\n" +
		"13:E0112 09:36:32.221463    6384 proxier.go:1061] can't open\n" +
		"--\n" +
		"40:May 30 14:38:57 worker4 kube-proxy[17263]: invalid configuration\n"
	if s := GrepLogFormat.Sniff("x.txt", []byte(in)); s < 80 {
		t.Errorf("sniff %d", s)
	}
	evs := readGrep(t, "kube-proxy.txt", in)
	var got []string
	for _, ev := range evs {
		got = append(got, containerLine(ev))
	}
	want := `1 0000-01-12T09:36:31.968312Z I kube-proxy@ //  "before"|` +
		`2 0000-01-12T09:36:32.221463Z E kube-proxy@ //  "can't open"|` +
		`4 0000-05-30T14:38:57Z  kube-proxy@worker4 //  "invalid configuration"`
	if strings.Join(got, "|") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	// Log lines of their own are not grep's.
	if s := GrepLogFormat.Sniff("x.log", []byte("I0112 09:36:31.968312    6384 proxier.go:431] x\n")); s != 0 {
		t.Errorf("a klog line sniffed %d", s)
	}
}

func readGrep(t *testing.T, name, in string) []model.LogEvent {
	t.Helper()
	snap := &model.Snapshot{}
	src := &format.File{Name: name, Format: GrepLogFormat.Name}
	if _, err := GrepLogFormat.Parse(context.Background(), strings.NewReader(in), src, snap); err != nil {
		t.Error(err)
	}
	return snap.Logs
}

func FuzzGrepLog(f *testing.F) {
	f.Add("kube-proxy.log:735491:E0112 09:36:32.221463    6384 proxier.go:1061] can't open\nkube-proxy.log:736968:-A X\n")
	f.Add("12-I0112 09:36:31.968312 1 a.go:1] x\n--\n13:{\"level\":\"info\",\"msg\":\"x\"}\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, GrepLogFormat, in) })
}
