package results

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// The orders of a Store's rows, which every Store applies (a database's
// collation would not give Go's byte order).

// SeverityRank orders severities: info < warning < error; 0 for anything
// else ("").
func SeverityRank(s string) int {
	switch s {
	case "info":
		return 1
	case "warning":
		return 2
	case "error":
		return 3
	}
	return 0
}

// SortRules sorts the rows of Store.Rules: by Bundles, most first, then by
// Rule.
func SortRules(rows []RuleCount) {
	slices.SortFunc(rows, func(a, b RuleCount) int {
		return cmp.Or(cmp.Compare(b.Bundles, a.Bundles), strings.Compare(a.Rule, b.Rule))
	})
}

// SortWeeks sorts the rows of Store.Weeks: by week, UnknownWeek last.
func SortWeeks(rows []GroupCount) {
	slices.SortFunc(rows, func(a, b GroupCount) int {
		return cmp.Or(cmpUnknown(a.Group == UnknownWeek, b.Group == UnknownWeek), strings.Compare(a.Group, b.Group))
	})
}

// SortVersions sorts the rows of Store.Versions: by minor version, in the
// order of the numbers ("1.9" before "1.31"), UnknownVersion last.
func SortVersions(rows []GroupCount) {
	slices.SortFunc(rows, func(a, b GroupCount) int {
		return cmp.Or(cmpUnknown(a.Group == UnknownVersion, b.Group == UnknownVersion), compareMinor(a.Group, b.Group))
	})
}

// SortFingerprints sorts the rows of Store.Fingerprints: by Bundles, most
// first, then by Fingerprint.
func SortFingerprints(rows []FingerprintCount) {
	slices.SortFunc(rows, func(a, b FingerprintCount) int {
		return cmp.Or(cmp.Compare(b.Bundles, a.Bundles), strings.Compare(a.Fingerprint, b.Fingerprint))
	})
}

// SortBundles sorts the rows of Store.Bundles: by Bundle.
func SortBundles(rows []BundleRef) {
	slices.SortFunc(rows, func(a, b BundleRef) int { return strings.Compare(a.Bundle, b.Bundle) })
}

// cmpUnknown puts the unknown group after the others.
func cmpUnknown(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareMinor compares two minor versions ("1.31") by their numbers,
// then as strings.
func compareMinor(a, b string) int {
	amaj, amin, aok := splitMinor(a)
	bmaj, bmin, bok := splitMinor(b)
	if aok && bok {
		if c := cmp.Or(cmp.Compare(amaj, bmaj), cmp.Compare(amin, bmin)); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

func splitMinor(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return x, y, found && err1 == nil && err2 == nil
}
