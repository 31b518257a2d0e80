package query

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/results"
)

// Answer is a Store's answer to a query, ready to be written as a table,
// JSON or CSV.
type Answer struct {
	// header and rows are the table's; fields and values the CSV's, whose
	// columns are the JSON fields of the rows.
	header []string
	rows   [][]string
	// minWidth is the table's fit.Table.MinWidth (nil: the headers').
	minWidth []int
	fields   []string
	values   [][]string
	// json is the Store's rows, for JSON.
	json any
}

// Len is the number of rows of the answer.
func (a *Answer) Len() int { return len(a.rows) }

// Ask asks st the query name (one of Rules, Weeks, Versions, Fingerprints
// and Bundles, whose finding is fingerprint) about the bundles f keeps.
func Ask(ctx context.Context, st results.Store, name, fingerprint string, f results.Filter) (*Answer, error) {
	a := &Answer{}
	switch name {
	case Rules:
		rows, err := st.Rules(ctx, f)
		if err != nil {
			return nil, err
		}
		a.json = rows
		a.header = []string{"RULE", "BUNDLES", "FINDINGS", "MAX SEVERITY", "FIRST", "LAST"}
		a.fields = []string{"rule", "bundles", "findings", "max_severity", "first", "last"}
		// Narrowed to fit, the rules keep up to 18 columns (most names
		// whole, a longer one broken after a '-') and the times 10 (the
		// day, then the hour), rather than being cut mid-word.
		longest := 0
		for _, r := range rows {
			longest = max(longest, len(r.Rule))
		}
		a.minWidth = []int{min(longest, 18), 0, 0, 0, 10, 10}
		for _, r := range rows {
			a.rows = append(a.rows, []string{r.Rule, strconv.Itoa(r.Bundles), strconv.Itoa(r.Findings), r.MaxSeverity, day(r.First), day(r.Last)})
			a.values = append(a.values, []string{r.Rule, strconv.Itoa(r.Bundles), strconv.Itoa(r.Findings), r.MaxSeverity, stamp(r.First), stamp(r.Last)})
		}
	case Weeks, Versions:
		rows, err := st.Weeks(ctx, f)
		group := "WEEK"
		if name == Versions {
			rows, err = st.Versions(ctx, f)
			group = "VERSION"
		}
		if err != nil {
			return nil, err
		}
		a.json = rows
		with := "WITH FINDINGS"
		if f.Rule != "" {
			with = "WITH " + f.Rule
		}
		a.header = []string{group, "BUNDLES", with, "FINDINGS"}
		a.fields = []string{"group", "bundles", "matching", "findings"}
		// The bundles whose evidence was cut short get a column when
		// there are any: their findings cover what could be read.
		incomplete := slices.ContainsFunc(rows, func(r results.GroupCount) bool { return r.Incomplete > 0 })
		if incomplete {
			a.header, a.fields = append(a.header, "INCOMPLETE"), append(a.fields, "incomplete")
		}
		for _, r := range rows {
			row := []string{r.Group, strconv.Itoa(r.Bundles), strconv.Itoa(r.Matching), strconv.Itoa(r.Findings)}
			if incomplete {
				row = append(row, strconv.Itoa(r.Incomplete))
			}
			a.rows, a.values = append(a.rows, row), append(a.values, row)
		}
	case Fingerprints:
		rows, err := st.Fingerprints(ctx, f)
		if err != nil {
			return nil, err
		}
		a.json = rows
		a.header = []string{"FINGERPRINT", "RULE", "BUNDLES", "TITLE"}
		a.fields = []string{"fingerprint", "rule", "title", "bundles"}
		for _, r := range rows {
			a.rows = append(a.rows, []string{r.Fingerprint, r.Rule, strconv.Itoa(r.Bundles), r.Title})
			a.values = append(a.values, []string{r.Fingerprint, r.Rule, r.Title, strconv.Itoa(r.Bundles)})
		}
	case Bundles:
		rows, err := st.Bundles(ctx, fingerprint, f)
		if err != nil {
			return nil, err
		}
		a.json = rows
		a.header = []string{"BUNDLE", "SEVERITY", "TIME", "VERSION", "TITLE"}
		a.fields = []string{"bundle", "rule", "severity", "title", "bundle_time", "kubernetes_version"}
		for _, r := range rows {
			a.rows = append(a.rows, []string{r.Bundle, r.Severity, day(r.BundleTime), cmp.Or(r.KubernetesVersion, "-"), r.Title})
			a.values = append(a.values, []string{r.Bundle, r.Rule, r.Severity, r.Title, stamp(r.BundleTime), r.KubernetesVersion})
		}
	default:
		return nil, fmt.Errorf("unknown query %q", name)
	}
	return a, nil
}

// day is a time in a table: to the minute, in UTC; "-" for none.
func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// stamp is a time in CSV: RFC 3339 in UTC; "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Write writes a in format (one of Formats), a table fitted to width
// columns (no limit if 0). An empty table is written as nothing; empty
// JSON is [], and empty CSV its header.
func (a *Answer) Write(w io.Writer, format string, width int) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(a.json)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(a.fields)
		for _, v := range a.values {
			cw.Write(v)
		}
		cw.Flush()
		return cw.Error()
	}
	if len(a.rows) == 0 {
		return nil
	}
	t := &fit.Table{Header: a.header, MinWidth: a.minWidth}
	for _, r := range a.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = escape.String(c)
		}
		t.Rows = append(t.Rows, cells)
	}
	return t.Render(w, width)
}
