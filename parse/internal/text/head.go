package text

import (
	"bytes"
	"strings"
)

// HeadSize is how much of a file is looked at to sniff its format.
const HeadSize = 64 << 10

// HeadLines returns up to max non-empty lines of head, without a final
// partial line unless head is all there is.
//
// While head is shared (ShareHead), the lines are split once and every
// caller is handed the same ones: they must not be changed.
func HeadLines(head []byte, max int) []string { return headLines(head, max) }

// splitHead is HeadLines, each call splitting head anew.
func splitHead(head []byte, max int) []string {
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && len(head) == HeadSize {
		head = head[:i]
	}
	var out []string
	for len(head) > 0 && len(out) < max {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		s := NormalizeLine(string(line))
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// IsText reports whether head looks like text: no NUL bytes.
func IsText(head []byte) bool {
	return bytes.IndexByte(head, 0) < 0
}

// RatioScore turns the share of lines a sniffer recognized into a score:
// high when nearly all are recognized, 0 below half.
func RatioScore(matched, total, max int) int {
	if matched == 0 || total == 0 || 2*matched < total {
		return 0
	}
	return max * matched / total
}
