package logs_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/logs"
)

// Kernel lines as pasted in starphleet #352: the first cut before its
// host, every later one hard-wrapped after "table full,". Each wrapped
// record is one event at its first line, with the message joined; the cut
// line is reported.
func TestKernelLinesHardWrapped(t *testing.T) {
	const name = "starphleet-pr352_kernel-nf_conntrack-table-full_wrapped.log"
	file := filepath.Join(testutil.Root(), "fixtures/real/incident-evidence", name)
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), name+":1: ") {
		t.Errorf("warnings: %v", warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Kind != model.KindLogs || snap.Inputs[0].Records != 4 {
		t.Fatalf("inputs %+v", snap.Inputs)
	}
	var got []string
	for _, ev := range snap.Logs {
		got = append(got, fmt.Sprintf("%d %s %s %s %q", ev.Pos.Line, ev.Time.Format("Jan 2 15:04:05"),
			ev.Node, ev.Source, ev.Message))
	}
	want := []string{
		`2 Feb 23 16:44:36 batch3 kernel "[38781207.393661] nf_conntrack: table full, dropping packet"`,
		`4 Feb 23 16:44:36 batch3 kernel "[38781207.494836] nf_conntrack: table full, dropping packet"`,
		`6 Feb 23 16:44:36 batch3 kernel "[38781207.495169] nf_conntrack: table full, dropping packet"`,
		`8 Feb 23 16:44:36 batch3 kernel "[38781207.495196] nf_conntrack: table full, dropping packet"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Only a syslog or dmesg line that ends mid-sentence, or that the next
// line completes into a known kernel message, takes the next line in.
func TestKernelWrapOnlyMidSentence(t *testing.T) {
	for _, c := range []struct {
		name, in string
		events   []string // line and message of each event
		errs     string   // the lines reported
	}{
		{"known message", "[17398.958480] nf_conntrack: table\nfull, dropping packet\n",
			[]string{"1 nf_conntrack: table full, dropping packet"}, ""},
		{"comma", "Feb 23 16:44:36 n1 kubelet[7]: failed to sync,\nretrying\n",
			[]string{"1 failed to sync, retrying"}, ""},
		{"complete line", "Feb 23 16:44:36 n1 kernel: [1.0] eth0: link up\ndropping packet\n",
			[]string{"1 [1.0] eth0: link up"}, "x:2"},
		{"klog line", "I0223 16:44:36.000000 1 a.go:1] synced,\ndropping packet\n",
			[]string{"1 synced,"}, "x:2"},
		{"prompt", "[17398.958480] nf_conntrack: table full,\nroot@n1:~# dmesg\n[17399.958480] eth0: link up\n",
			[]string{"1 nf_conntrack: table full,", "3 eth0: link up"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := logs.Logs(strings.NewReader(c.in), "x")
			var got []string
			for _, ev := range evs {
				got = append(got, fmt.Sprintf("%d %s", ev.Pos.Line, ev.Message))
			}
			if strings.Join(got, "\n") != strings.Join(c.events, "\n") {
				t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.events, "\n"))
			}
			var list model.ErrorList
			var at []string
			if err != nil {
				if !errors.As(err, &list) {
					t.Fatalf("error %v", err)
				}
				for _, e := range list {
					at = append(at, e.Pos.String())
				}
			}
			if strings.Join(at, " ") != c.errs {
				t.Errorf("errors at %q, want %q (%v)", strings.Join(at, " "), c.errs, err)
			}
		})
	}
}
