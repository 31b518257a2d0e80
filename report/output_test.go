package report_test

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/report"
)

func TestParseOutputs(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // the outputs, or the error's words
	}{
		{[]string{"table"}, "table"},
		{[]string{"table", "json=report.json", "sarif=out/report.sarif"}, "table json=report.json sarif=out/report.sarif"},
		{[]string{"json=-"}, "json"},
		{[]string{"json=report.json"}, "json=report.json"},
		{[]string{"text=a=b.txt"}, "text=a=b.txt"},
		{nil, ""},
		{[]string{"xml"}, `error: "xml": unknown output format "xml"`},
		{[]string{"xml=r.xml"}, `error: "xml=r.xml": unknown output format "xml"`},
		{[]string{""}, `error: "": unknown output format ""`},
		{[]string{"=r.json"}, `error: "=r.json": unknown output format ""`},
		{[]string{"json="}, `error: "json=": no file after "json="`},
		{[]string{"table", "json"}, `error: "table" and "json": at most one output goes to standard output`},
		{[]string{"table", "json=-"}, `error: "table" and "json=-": at most one output goes to standard output`},
		{[]string{"json=r", "sarif=r"}, `error: "json=r" and "sarif=r": two outputs write the same file`},
	} {
		outs, err := report.ParseOutputs(c.in)
		var got string
		if err != nil {
			got = "error: " + err.Error()
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("%q: %s, want %s...", c.in, got, c.want)
			}
			continue
		}
		var parts []string
		for _, o := range outs {
			parts = append(parts, o.String())
		}
		if got = strings.Join(parts, " "); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
