package logs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// Real kernel lines (parse/testdata/make-dmesg.sh) in each of dmesg's
// formats give the same messages, with what each format tells: seconds
// since boot, the date, the facility and level.
func TestDmesgReal(t *testing.T) {
	const dir = "parse/testdata/logs/"
	var messages string
	for _, c := range []struct{ file, first string }{
		{"dmesg.txt", "kernel  uptime=17398.958480"},
		{"dmesg-T.txt", "kernel 2026-11-23T16:59:14Z "},
		{"dmesg-time-format-iso.txt", "kernel 2026-11-23T16:59:14.95848Z "},
		{"dmesg-x.txt", "kernel info facility=kern,uptime=17398.958480"},
		{"dmesg-r.txt", "kernel info uptime=17398.958480"},
	} {
		evs := parsetest.ReadFile(t, dir+c.file, Logs)
		if len(evs) != 6 {
			t.Fatalf("%s: %d events", c.file, len(evs))
		}
		var keys []string
		for k, v := range evs[0].Fields {
			keys = append(keys, k+"="+v)
		}
		slices.Sort(keys)
		tm := ""
		if !evs[0].Time.IsZero() {
			tm = evs[0].Time.Format(time.RFC3339Nano)
		}
		// "source time-or-level fields": each format shows one of the two
		if got := fmt.Sprintf("%s %s %s", evs[0].Source, tm+evs[0].Level, strings.Join(keys, ",")); got != c.first {
			t.Errorf("%s: first event %q, want %q", c.file, got, c.first)
		}
		var msgs []string
		for _, ev := range evs {
			msgs = append(msgs, ev.Message)
		}
		if m := strings.Join(msgs, "|"); messages == "" {
			messages = m
		} else if m != messages {
			t.Errorf("%s: messages %q, want %q", c.file, m, messages)
		}
	}
	if !strings.HasPrefix(messages, "nm-t-dmbr: port 1(nm-t-dm1) entered disabled state|") {
		t.Errorf("messages %q", messages)
	}
}
