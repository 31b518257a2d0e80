package host

import (
	"fmt"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// HairpinFilesFormat reads the bridge ports' hairpin_mode files dumped with
// grep.
var HairpinFilesFormat = &format.Format{
	Name:    "brport-hairpin",
	Kind:    model.KindLinks,
	Command: "grep . /sys/class/net/*/brport/hairpin_mode (grep -H . when one port matches; also head/tail of the files, or a loop printing \"path: value\")",
	Doc: "one record per bridge port with its device and its hairpin mode (1 on, 0 off); the device is " +
		"the directory the file is in; prompts and banners name the node",
	Sniff: sniffHairpinFiles,
	Parse: format.Records(readHairpinFiles, func(s *model.Snapshot, out []model.Link) { s.Links = append(s.Links, out...) }, "links"),
}

// HairpinFiles parses dumps of /sys/class/net/<dev>/brport/hairpin_mode:
// grep's "/sys/class/net/veth1/brport/hairpin_mode:1", a loop's "path: 1",
// or head's "==> path <==" header with the value on the line below. Each
// gives a link record with the device and its Hairpin only. A line that is
// none of these is reported with its position and the rest is read. name
// is used only in positions.
func HairpinFiles(r io.Reader, name string) ([]model.Link, error) {
	return format.ReadAll(r, name, readHairpinFiles)
}

// hairpinPathRe matches a hairpin_mode file's path and what follows it.
var hairpinPathRe = lazyre.New(`^(?:/sys)?/class/net/([^/\s]+)/brport/hairpin_mode(?::\s*(\S+))?$`)

func readHairpinFiles(r io.Reader, src *format.File, errs *model.ErrorList) []model.Link {
	var out []model.Link
	pending := "" // the device a head header named, whose value is on the next line
	var pendingPos model.Pos
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { pending = "" }}, func(l *text.Line) {
		t := l.Trimmed
		if p, ok := fileHeader(t); ok {
			m := hairpinPathRe.FindStringSubmatch(p)
			if m == nil || m[2] != "" {
				l.Syntax(fmt.Errorf("expected a header of a hairpin_mode file (\"==> /sys/class/net/veth1/brport/hairpin_mode <==\"), got %q", p))
				pending = ""
				return
			}
			pending, pendingPos = m[1], l.Pos()
			return
		}
		if pending != "" {
			h, err := hairpinValue(t)
			if l.Syntax(err) {
				out = append(out, model.Link{Node: l.Node, Dev: pending, Hairpin: &h, Pos: pendingPos})
			}
			pending = ""
			return
		}
		m := hairpinPathRe.FindStringSubmatch(t)
		if m == nil || m[2] == "" {
			l.Syntax(fmt.Errorf("expected a hairpin_mode file and its value (\"/sys/class/net/veth1/brport/hairpin_mode:1\")"))
			return
		}
		h, err := hairpinValue(m[2])
		if l.Syntax(err) {
			out = append(out, model.Link{Node: l.Node, Dev: m[1], Hairpin: &h, Pos: l.Pos()})
		}
	})
	return out
}

// hairpinValue reads a hairpin_mode file's value: 1 or 0.
func hairpinValue(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("expected hairpin_mode 0 or 1, got %q", s)
}

func sniffHairpinFiles(_ string, head []byte) int {
	hits := 0
	matched, total, _ := text.SniffLines(head, 200, nil, func(line string) text.Match {
		t := strings.TrimSpace(line)
		if p, ok := fileHeader(t); ok {
			t = p
		}
		if m := hairpinPathRe.FindStringSubmatch(t); m != nil {
			hits++
			return text.Hit
		}
		if t == "0" || t == "1" {
			return text.Skip
		}
		return text.Miss
	})
	if hits == 0 {
		return 0
	}
	return min(text.RatioScore(matched, total, 96), 96)
}
