package logs

import (
	"strings"

	"github.com/netmortem/netmortem/parse/internal/text"
)

// sniffLogs scores head for one log shape: the share of lines of any log
// shape, when that shape is the most common one (journald lines count as
// klog when any holds a klog line). A journal without klog lines is read as
// klog with a lower score; other formats score it 0.
func sniffLogs(head []byte, shape string) int {
	if !text.IsText(head) {
		return 0
	}
	// Every log format reads the head's lines the same way, whatever its
	// shape: while the head is shared, once.
	st := text.HeadValue(head, headShapesKey{}, func() headShapes { return readHeadShapes(head) })
	switch {
	case (st.dominant == "syslog" || st.dominant == "timestamps") && shape == "klog":
		// A journal without klog lines, or kubectl logs --timestamps of
		// lines of no known shape, is still read, as the klog format.
		return text.RatioScore(st.recognized, st.total, 60)
	case st.dominant != shape:
		return 0
	}
	return text.RatioScore(st.recognized, st.total, 90)
}

// headShapes is what the log formats' sniffers read from a head: the
// shape most of its lines have, how many lines of any log shape it holds,
// and how many lines it holds.
type headShapes struct {
	dominant          string
	recognized, total int
}

// headShapesKey keeps a head's headShapes (text.HeadValue).
type headShapesKey struct{}

// readHeadShapes reads head's lines by every log shape.
func readHeadShapes(head []byte) headShapes {
	var lr logReader
	counts := map[string]int{}
	total := 0
	wrappedRecord := false
	last := "" // the kind of the line before, "" after one of no kind
	lastMsg := ""
	lines := text.HeadLines(head, 200)
	openValue := false // a klog value (key=<) is open: its lines are the value's
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if openValue {
			if strings.TrimSpace(line) == ">" {
				openValue = false
				continue
			}
			if strings.HasPrefix(line, "\t") || valueLineUntabbed(line, lr.parseLine) {
				continue
			}
			openValue = false
		}
		if _, n, ok := prettyLogAt(lines, i); ok {
			// A pretty-printed JSON log record counts as one JSON
			// line, three times: its shape is plain.
			counts["json"] += 3
			total += 3
			i += n - 1
			continue
		}
		if w, ok := lr.unwrap(strings.TrimLeft(line, " \t")); ok {
			// A runtime's records name the format, and are so plainly
			// theirs that each counts three times; kubectl's timestamps
			// count for the line they stamp.
			kind, n := w.kind, 3
			if kind == "timestamps" || kind == "stern" {
				_, kind, _ = lr.parseLine(w.inner)
				n = 1
			}
			counts[kind] += n
			total += n
			continue
		}
		if strings.HasPrefix(line, `{"log":"`) {
			// A Docker record a terminal wrapped (or cut by the head);
			// its rest, on the next line, tells nothing.
			counts["docker-json"] += 3
			total += 3
			wrappedRecord = !strings.HasSuffix(strings.TrimRight(line, " "), "}")
			continue
		}
		if wrappedRecord {
			wrappedRecord = false
			continue
		}
		if isContinuation(line) || fileCommand(strings.TrimSpace(line)) {
			continue
		}
		if _, ok := parseVerboseHeader(line); ok {
			counts["journal"] += 3 // its fields follow, indented
			total += 3
			continue
		}
		if ev, kind, ok := lr.parseLine(line); ok {
			counts[kind]++
			total++
			last, lastMsg = kind, ev.Message
			_, open := ev.Fields[multiKeyMarker]
			openValue = kind == "klog" && (open || strings.HasSuffix(strings.TrimRight(line, " "), "=<"))
			continue
		}
		if klogContinues(last, lastMsg, line) {
			lastMsg += "\n" + strings.TrimSpace(line)
			continue // the output a klog error quotes, up to its ")"
		}
		if kernelWrap(last, lastMsg, line) {
			lastMsg = strings.TrimRight(lastMsg, " ") + " " + strings.TrimSpace(line)
			continue // the rest of a hard-wrapped kernel or syslog line
		}
		if goesOnUnprefixed(last) && !text.IsPromptOrMarker(line) {
			continue // a traceback or a wrapped message
		}
		last = ""
		if m, rest := submatches(timestampsRe, line); m != nil && strings.TrimSpace(rest) != "" {
			// kubectl logs --timestamps of an application's own lines.
			counts["timestamps"]++
			total++
			continue
		}
		t := strings.TrimSpace(line)
		if _, ok := text.NodeMarker(line); ok || logNoise(t) || t == "*" {
			continue
		}
		if _, ok := sectionHeader(strings.TrimPrefix(t, "* ")); ok {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "* "); ok {
			if _, kind, ok := lr.parseLine(rest); ok {
				counts[kind]++
				total++
				continue
			}
			if logNoise(strings.TrimSpace(rest)) {
				continue
			}
		}
		if _, _, ok := text.ShellCommand(line); ok {
			continue
		}
		total++
	}
	// The dominant shape names the format; every recognized line counts
	// for it, since the reader reads them all.
	if counts["klog"] > 0 {
		counts["klog"] += counts["syslog"]
		counts["syslog"] = 0
	}
	recognized, dominant, best := 0, "", 0
	recognized += counts["plain"] + counts["clog"] // read by every log format, never names one
	for _, k := range []string{"klog", "logfmt", "json", "etcd", "nginx-error", "nginx-access", "coredns", "syslog", "dmesg", "cri", "docker-json", "journal", "timestamps", "felix", "cilium", "hubble", "weave", "golog"} {
		recognized += counts[k]
		if counts[k] > best {
			dominant, best = k, counts[k]
		}
	}
	return headShapes{dominant: dominant, recognized: recognized, total: total}
}
