package results

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// OpenJSONL reads the JSON Lines files of a batch (one file, or the files
// of its shards, in the order given) as a Store. It holds, of each bundle,
// its last line that is not canceled, as a database sink does; a line cut
// short at the end of a file (without its newline, as a killed batch leaves
// it) is ignored, as a resumed batch drops it. The files are read once,
// line by line: the Store keeps a summary of each bundle (its time, version
// and findings' fingerprints, rules, severities and titles), never the
// lines. A line that is not a batch line is an error, positioned
// (file:line).
func OpenJSONL(paths ...string) (Store, error) {
	s := &jsonlStore{bundles: map[string]*bundleSummary{}, strs: map[string]string{}}
	for _, p := range paths {
		if err := s.readFile(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ReadJSONL reads the lines of r, named name in errors, as OpenJSONL reads
// a file.
func ReadJSONL(r io.Reader, name string) (Store, error) {
	s := &jsonlStore{bundles: map[string]*bundleSummary{}, strs: map[string]string{}}
	if err := s.read(r, name); err != nil {
		return nil, err
	}
	return s, nil
}

// jsonlStore is the Store of JSON Lines files: a summary of each bundle.
type jsonlStore struct {
	bundles map[string]*bundleSummary
	// strs interns the strings that repeat from bundle to bundle (rules,
	// fingerprints, titles, versions).
	strs map[string]string
}

// bundleSummary is what a jsonlStore keeps of a bundle's line.
type bundleSummary struct {
	bundle   string
	time     time.Time
	week     string
	version  string // as the line gives it
	minor    string
	findings []findingSummary // one per fingerprint
	// incomplete says the bundle's status is StatusIncomplete.
	incomplete bool
}

type findingSummary struct {
	fingerprint, rule, severity, title string
}

// storeLine is what a jsonlStore reads of a line.
type storeLine struct {
	Bundle            string    `json:"bundle"`
	Status            string    `json:"status"`
	BundleTime        time.Time `json:"bundle_time"`
	KubernetesVersion string    `json:"kubernetes_version"`
	Findings          []struct {
		Rule        string `json:"rule"`
		Fingerprint string `json:"fingerprint"`
		Severity    string `json:"severity"`
		Title       string `json:"title"`
	} `json:"findings"`
}

// maxLine is the longest line a jsonlStore reads.
const maxLine = 256 << 20

func (s *jsonlStore) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.read(f, path)
}

func (s *jsonlStore) read(r io.Reader, name string) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	for n := 1; ; n++ {
		line, err := readLine(br, buf[:0])
		buf = line
		if errors.Is(err, io.EOF) {
			// Without its newline the last line was cut (or is empty).
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := s.add(line); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
}

// readLine appends to buf the next line of br, without its newline. Its
// error is io.EOF when the line has no newline.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return buf, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

func (s *jsonlStore) add(line []byte) error {
	var l storeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("not a line of netmortem batch: %w", err)
	}
	if l.Bundle == "" {
		return errors.New(`not a line of netmortem batch: no "bundle"`)
	}
	if l.Status == StatusCanceled {
		return nil
	}
	b := &bundleSummary{bundle: l.Bundle, time: l.BundleTime.UTC(), week: Week(l.BundleTime),
		version: s.intern(l.KubernetesVersion), minor: s.intern(MinorVersion(l.KubernetesVersion)),
		incomplete: l.Status == StatusIncomplete}
	if l.BundleTime.IsZero() {
		b.time = time.Time{}
	}
	at := map[string]int{}
	for _, f := range l.Findings {
		fs := findingSummary{s.intern(f.Fingerprint), s.intern(f.Rule), s.intern(f.Severity), s.intern(f.Title)}
		// A bundle holds a fingerprint once, as a database's findings
		// table does: a later finding with it replaces the earlier one.
		if i, ok := at[f.Fingerprint]; ok {
			b.findings[i] = fs
			continue
		}
		at[f.Fingerprint] = len(b.findings)
		b.findings = append(b.findings, fs)
	}
	s.bundles[l.Bundle] = b
	return nil
}

func (s *jsonlStore) intern(v string) string {
	if i, ok := s.strs[v]; ok {
		return i
	}
	s.strs[v] = v
	return v
}

// Within says whether a bundle whose time is t is kept by f's Since and
// Until: a bundle whose time is unknown (zero) is kept only when f sets
// neither.
func (f Filter) Within(t time.Time) bool {
	if f.Since.IsZero() && f.Until.IsZero() {
		return true
	}
	if t.IsZero() {
		return false
	}
	return (f.Since.IsZero() || !t.Before(f.Since)) && (f.Until.IsZero() || t.Before(f.Until))
}

// each calls fn for each bundle f keeps, with its findings of f.Rule (or
// all of them).
func (s *jsonlStore) each(f Filter, fn func(b *bundleSummary, fs []findingSummary)) {
	var kept []findingSummary
	for _, b := range s.bundles {
		if !f.Within(b.time) {
			continue
		}
		kept = kept[:0]
		for _, fd := range b.findings {
			if f.Rule == "" || fd.rule == f.Rule {
				kept = append(kept, fd)
			}
		}
		fn(b, kept)
	}
}

func (s *jsonlStore) Rules(_ context.Context, f Filter) ([]RuleCount, error) {
	rows := map[string]*RuleCount{}
	s.each(f, func(b *bundleSummary, fs []findingSummary) {
		counted := map[string]bool{}
		for _, fd := range fs {
			r := rows[fd.rule]
			if r == nil {
				r = &RuleCount{Rule: fd.rule}
				rows[fd.rule] = r
			}
			r.Findings++
			if SeverityRank(fd.severity) > SeverityRank(r.MaxSeverity) {
				r.MaxSeverity = fd.severity
			}
			if counted[fd.rule] {
				continue
			}
			counted[fd.rule] = true
			r.Bundles++
			if !b.time.IsZero() {
				if r.First.IsZero() || b.time.Before(r.First) {
					r.First = b.time
				}
				if b.time.After(r.Last) {
					r.Last = b.time
				}
			}
		}
	})
	out := make([]RuleCount, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	SortRules(out)
	return out, nil
}

func (s *jsonlStore) Weeks(_ context.Context, f Filter) ([]GroupCount, error) {
	out := s.groups(f, func(b *bundleSummary) string { return b.week })
	SortWeeks(out)
	return out, nil
}

func (s *jsonlStore) Versions(_ context.Context, f Filter) ([]GroupCount, error) {
	out := s.groups(f, func(b *bundleSummary) string { return b.minor })
	SortVersions(out)
	return out, nil
}

func (s *jsonlStore) groups(f Filter, group func(*bundleSummary) string) []GroupCount {
	rows := map[string]*GroupCount{}
	s.each(f, func(b *bundleSummary, fs []findingSummary) {
		g := group(b)
		r := rows[g]
		if r == nil {
			r = &GroupCount{Group: g}
			rows[g] = r
		}
		r.Bundles++
		if b.incomplete {
			r.Incomplete++
		}
		if len(fs) > 0 {
			r.Matching++
			r.Findings += len(fs)
		}
	})
	out := make([]GroupCount, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	return out
}

func (s *jsonlStore) Fingerprints(_ context.Context, f Filter) ([]FingerprintCount, error) {
	rows := map[string]*FingerprintCount{}
	first := map[string]string{} // the bundle each row's rule and title come from
	s.each(f, func(b *bundleSummary, fs []findingSummary) {
		for _, fd := range fs {
			r := rows[fd.fingerprint]
			if r == nil {
				r = &FingerprintCount{Fingerprint: fd.fingerprint}
				rows[fd.fingerprint] = r
			}
			r.Bundles++
			if fb, ok := first[fd.fingerprint]; !ok || b.bundle < fb {
				first[fd.fingerprint] = b.bundle
				r.Rule, r.Title = fd.rule, fd.title
			}
		}
	})
	out := make([]FingerprintCount, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	SortFingerprints(out)
	return out, nil
}

func (s *jsonlStore) Bundles(_ context.Context, fp string, f Filter) ([]BundleRef, error) {
	out := []BundleRef{}
	s.each(f, func(b *bundleSummary, fs []findingSummary) {
		for _, fd := range fs {
			if fd.fingerprint == fp {
				out = append(out, BundleRef{Bundle: b.bundle, Rule: fd.rule, Severity: fd.severity, Title: fd.title,
					BundleTime: b.time, KubernetesVersion: b.version})
			}
		}
	})
	SortBundles(out)
	return out, nil
}

func (s *jsonlStore) Close() error { return nil }
