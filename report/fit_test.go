package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/report"
)

var colorEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestWriteTableStyles(t *testing.T) {
	for name, rep := range map[string]*report.Report{"fixed": fixedReport(), "hostile": hostileReport()} {
		var plain, zero bytes.Buffer
		if err := report.Write(&plain, "table", rep); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteTable(&zero, rep, report.TableStyle{}); err != nil {
			t.Fatal(err)
		}
		if plain.String() != zero.String() {
			t.Errorf("%s: the zero TableStyle changes the table:\n%s\nvs\n%s", name, zero.String(), plain.String())
		}
		for _, width := range []int{60, 80, 119, 120, 200} {
			var mono, color bytes.Buffer
			if err := report.WriteTable(&mono, rep, report.TableStyle{Width: width}); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteTable(&color, rep, report.TableStyle{Width: width, Color: true}); err != nil {
				t.Fatal(err)
			}
			if got := colorEscape.ReplaceAllString(color.String(), ""); got != mono.String() {
				t.Errorf("%s at %d: colour changes more than the escapes", name, width)
			}
			if !strings.Contains(color.String(), "\x1b[") {
				t.Errorf("%s at %d: no colour", name, width)
			}
			if strings.ContainsAny(mono.String(), "\x1b\r") || strings.ContainsRune(colorEscape.ReplaceAllString(color.String(), ""), '\x1b') {
				t.Errorf("%s at %d: an ESC or CR byte of the input reached the output", name, width)
			}
			for _, l := range strings.Split(mono.String(), "\n") {
				if fit.Width(l) > width && !aloneCommand(rep, l) {
					t.Errorf("%s at %d: line %d wide: %q", name, width, fit.Width(l), l)
				}
			}
		}
	}
}

// A fitted table starts with the verdict, as the plain one does, its lines
// wrapped to the width.
func TestWriteTableVerdict(t *testing.T) {
	rep := fixedReport()
	v := report.NewVerdict(rep.Rules(), rep.Findings, rep.Inputs)
	if len(v.Causes) == 0 {
		t.Fatal("the fixed report has no verdict")
	}
	first := strings.Fields(v.Causes[0].Line)
	for _, width := range []int{60, 80, 200} {
		var b bytes.Buffer
		if err := report.WriteTable(&b, rep, report.TableStyle{Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		words := strings.Fields(out)
		at := strings.Index(strings.Join(words, " "), strings.Join(first, " "))
		table := strings.Index(out, "Findings (")
		if at < 0 || table >= 0 && strings.Index(out, first[0]) > table {
			t.Errorf("at %d: the verdict %q is not before the table:\n%s", width, v.Causes[0].Line, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if fit.Width(l) > width && !aloneCommand(rep, l) {
				t.Errorf("at %d: line wider than the terminal: %q", width, l)
			}
		}
	}
}

// aloneCommand reports whether line l is a command of rep alone on its
// line, which is printed whole however wide: a finding's command to
// decide, a command to collect, or a code span of a fix (with the
// punctuation around it).
func aloneCommand(rep *report.Report, l string) bool {
	l = strings.TrimSpace(l)
	for _, f := range rep.Findings {
		if f.Decide != "" && strings.HasPrefix(f.Decide, l) {
			return true
		}
		for i, span := range strings.Split(f.Fix, "`") {
			if i%2 == 1 && strings.Contains(l, "`"+span+"`") && len(l) <= len(span)+4 {
				return true
			}
		}
	}
	for _, e := range rep.NextEvidence {
		if l == e.Shell {
			return true
		}
	}
	return false
}
