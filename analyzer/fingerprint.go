package analyzer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Fingerprint returns the fingerprint of a finding of rule about subject:
// the first 16 hexadecimal digits of the SHA-256 of the rule's name and
// the subject's keys and values, in key order (see the package doc).
func Fingerprint(rule string, subject map[string]string) string {
	keys := make([]string, 0, len(subject))
	for k := range subject {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("rule\x00" + rule + "\x00")
	for _, k := range keys {
		fmt.Fprintf(&b, "%d:%s=%d:%s\x00", len(k), k, len(subject[k]), subject[k])
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// fingerprintOf returns f's fingerprint: from its Subject, or from its
// Title when the Subject is empty.
func fingerprintOf(f *Finding) string {
	if len(f.Subject) == 0 {
		return Fingerprint(f.Rule, map[string]string{"title": f.Title, "\x00fallback": "title"})
	}
	return Fingerprint(f.Rule, f.Subject)
}

// setFingerprints sets the Fingerprint of each finding of fs, sorted, and
// tells apart those that would share one with a suffix "-2", "-3", ...
func setFingerprints(fs []Finding) {
	seen := map[string]int{}
	for i := range fs {
		fp := fingerprintOf(&fs[i])
		seen[fp]++
		if n := seen[fp]; n > 1 {
			fp = fmt.Sprintf("%s-%d", fp, n)
		}
		fs[i].Fingerprint = fp
	}
}
