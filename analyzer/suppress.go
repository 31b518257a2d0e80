package analyzer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Suppressed is a finding left out of a report, and why.
type Suppressed struct {
	Finding `yaml:",inline"`
	// By is what suppressed it: the position of the ignore entry,
	// "file:line" ("ignore[N]" for an entry built by hand), or "baseline".
	By string `json:"suppressed_by" yaml:"suppressed_by"`
	// Reason is the ignore entry's reason, or names the baseline report.
	Reason string `json:"suppressed_reason" yaml:"suppressed_reason"`
}

// Expired reports whether the entry no longer applies at now: its
// Expires day (UTC) is over.
func (ig *Ignore) Expired(now time.Time) bool {
	return !ig.Expires.IsZero() && !now.UTC().Before(ig.Expires.AddDate(0, 0, 1))
}

// Matches reports whether every selector the entry sets matches f (an
// entry that sets none matches nothing). Expiry is not considered.
func (ig *Ignore) Matches(f *Finding) bool {
	if ig.Fingerprint == "" && ig.Rule == "" && ig.Node == "" && ig.Namespace == "" && ig.Object == "" && ig.Address == "" {
		return false
	}
	if ig.Fingerprint != "" && ig.Fingerprint != f.Fingerprint {
		return false
	}
	if ig.Rule != "" && ig.Rule != f.Rule {
		return false
	}
	if ig.Node != "" && ig.Node != f.Subject["node"] {
		return false
	}
	if ig.Namespace != "" && ig.Namespace != f.Subject["namespace"] && ig.Namespace != objectNamespace(f.Subject["object"]) {
		return false
	}
	if ig.Object != "" && !matchObject(ig.Object, f.Subject["object"]) {
		return false
	}
	if ig.Address != "" && !matchAnyAddress(ig.Address, f.Subject) {
		return false
	}
	return true
}

// addressKeys are the Subject keys whose values an address selector
// matches.
var addressKeys = []string{"address", "client", "backend", "vip", "source", "destination"}

func matchAnyAddress(sel string, subject map[string]string) bool {
	for _, k := range addressKeys {
		if v, ok := subject[k]; ok && matchAddress(sel, v) {
			return true
		}
	}
	return false
}

// objectNamespace returns the namespace of a Subject object "Kind ns/name".
func objectNamespace(obj string) string {
	_, ref, _ := strings.Cut(obj, " ")
	ns, _, ok := strings.Cut(ref, "/")
	if !ok {
		return ""
	}
	return ns
}

// matchObject reports whether the selector sel ("Kind ns/name" or
// "ns/name") matches the Subject object obj ("Kind ns/name").
func matchObject(sel, obj string) bool {
	if obj == "" {
		return false
	}
	kind, ref, _ := splitObject(sel)
	okind, oref, hasKind := strings.Cut(obj, " ")
	if !hasKind {
		okind, oref = "", obj
	}
	return ref == oref && (kind == "" || strings.EqualFold(kind, okind))
}

// IgnoreWarning is a warning about an ignore entry: it has expired, or
// it matched no finding.
type IgnoreWarning struct {
	// Pos is where the entry is: File and Line (empty for an entry
	// built by hand).
	Pos model.Pos
	// Message says what is wrong, without the position.
	Message string
}

// String writes the warning "file:line: message".
func (w IgnoreWarning) String() string {
	return w.Pos.String() + ": " + w.Message
}

func (ig *Ignore) warning(i int, format string, args ...any) IgnoreWarning {
	pos := model.Pos{File: ig.File, Line: ig.Line}
	if ig.File == "" {
		pos.File = ig.where(i)
		if f, l, ok := strings.Cut(ig.Pos, ":"); ok {
			if n, err := strconv.Atoi(l); err == nil && n > 0 {
				pos = model.Pos{File: f, Line: n}
			}
		}
	}
	return IgnoreWarning{Pos: pos, Message: fmt.Sprintf(format, args...)}
}

// Suppress splits findings into those kept and those an ignore entry of
// c suppresses (the first entry that matches, in file order). An entry
// past its Expires day at now suppresses nothing; each such entry gives
// a warning. A nil c keeps every finding.
func (c *Config) Suppress(findings []Finding, now time.Time) (kept []Finding, suppressed []Suppressed, warnings []IgnoreWarning) {
	kept = []Finding{}
	suppressed = []Suppressed{}
	var live []*Ignore
	if c != nil {
		for i := range c.Ignore {
			ig := &c.Ignore[i]
			if ig.Expired(now) {
				warnings = append(warnings, ig.warning(i, "ignore entry expired on %s and no longer applies (reason: %s)",
					ig.Expires.Format(DateLayout), ig.Reason))
				continue
			}
			live = append(live, ig)
		}
	}
	for _, f := range findings {
		hit := false
		for _, ig := range live {
			if ig.Matches(&f) {
				suppressed = append(suppressed, Suppressed{Finding: f, By: ig.where(indexOf(c.Ignore, ig)), Reason: ig.Reason})
				hit = true
				break
			}
		}
		if !hit {
			kept = append(kept, f)
		}
	}
	return kept, suppressed, warnings
}

// Unmatched returns a warning for each ignore entry of c, not expired at
// now, that suppressed none of suppressed (the findings Suppress left out
// of one run, or of every run that used c): an entry whose problem is
// gone, or whose selectors are wrong.
func (c *Config) Unmatched(suppressed []Suppressed, now time.Time) []IgnoreWarning {
	if c == nil {
		return nil
	}
	used := map[string]bool{}
	for _, s := range suppressed {
		used[s.By] = true
	}
	var out []IgnoreWarning
	for i := range c.Ignore {
		ig := &c.Ignore[i]
		if ig.Expired(now) || used[ig.where(i)] {
			continue
		}
		out = append(out, ig.warning(i, "ignore entry matched no finding (reason: %s)", ig.Reason))
	}
	return out
}

func indexOf(l []Ignore, ig *Ignore) int {
	for i := range l {
		if &l[i] == ig {
			return i
		}
	}
	return -1
}

func (ig *Ignore) where(i int) string {
	if ig.Pos != "" {
		return ig.Pos
	}
	return fmt.Sprintf("ignore[%d]", i)
}

// SuppressBaseline splits findings into those kept and those whose
// Fingerprint is among fingerprints, the findings of an earlier report
// (called name in the reason).
func SuppressBaseline(findings []Finding, fingerprints map[string]bool, name string) (kept []Finding, suppressed []Suppressed) {
	kept = []Finding{}
	suppressed = []Suppressed{}
	for _, f := range findings {
		if fingerprints[f.Fingerprint] {
			suppressed = append(suppressed, Suppressed{Finding: f, By: "baseline", Reason: "in the baseline " + name})
			continue
		}
		kept = append(kept, f)
	}
	return kept, suppressed
}
