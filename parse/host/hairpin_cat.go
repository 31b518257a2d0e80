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

// HairpinCatFormat reads the bridge ports' hairpin_mode files printed by
// cat over a glob: the values without the files' names.
var HairpinCatFormat = &format.Format{
	Name:    "hairpin-cat",
	Kind:    model.KindLinks,
	Command: "cat /sys/devices/virtual/net/docker0/brif/veth*/hairpin_mode (or /sys/class/net/*/brport/hairpin_mode)",
	Doc: "one record per value under the cat command: the bridge the path names (Master), the port by the path's " +
		"name when it has no wildcard, else by the glob and the value's rank (`veth*#1`, `veth*#2`: cat prints " +
		"the files in the glob's order but not their names), and its hairpin mode (1 on, 0 off)",
	Sniff: sniffHairpinCat,
	Parse: format.Records(readHairpinCat, func(s *model.Snapshot, out []model.Link) { s.Links = append(s.Links, out...) }, "links"),
}

// hairpinCatRe matches cat of hairpin_mode files: the bridge and the port
// glob of a brif path, or the port glob of a brport path.
var hairpinCatRe = lazyre.New(`^(?:sudo\s+)?cat\s+(?:/sys/(?:devices/virtual|class)/net/([^/\s]+)/brif/([^/\s]+)|/sys/class/net/([^/\s]+)/brport)/hairpin_mode\s*$`)

// hairpinCat is the cat command being read: its bridge, its port glob,
// and how many values it printed.
type hairpinCat struct {
	bridge, glob string
	n            int
	ok           bool
}

func (c *hairpinCat) start(cmd string) bool {
	m := hairpinCatRe.FindStringSubmatch(strings.TrimSpace(cmd))
	if m == nil {
		*c = hairpinCat{}
		return false
	}
	*c = hairpinCat{bridge: m[1], glob: m[2] + m[3], ok: true}
	return true
}

func readHairpinCat(r io.Reader, src *format.File, errs *model.ErrorList) []model.Link {
	var out []model.Link
	var c hairpinCat
	c.start(src.Command)
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(_ *text.Line, cmd string) { c.start(cmd) }}, func(l *text.Line) {
		if strings.HasSuffix(l.Trimmed, "hairpin_mode") && c.start(l.Trimmed) {
			return // the command pasted without its prompt
		}
		if !c.ok {
			l.Syntax(fmt.Errorf("expected cat of hairpin_mode files before their values, got %q", l.Trimmed))
			return
		}
		h, err := hairpinValue(l.Trimmed)
		if !l.Syntax(err) {
			return
		}
		c.n++
		dev := c.glob
		if strings.ContainsAny(dev, "*?[") {
			dev = fmt.Sprintf("%s#%d", c.glob, c.n)
		}
		out = append(out, model.Link{Node: l.Node, Dev: dev, Master: c.bridge, Hairpin: &h, Pos: l.Pos()})
	})
	return out
}

// sniffHairpinCat scores the values under a cat of hairpin_mode files.
func sniffHairpinCat(_ string, head []byte) int {
	var c hairpinCat
	cats := 0
	started := func(cmd string) bool {
		if c.start(cmd) {
			cats++
			return true
		}
		return false
	}
	matched, total, _ := text.SniffLines(head, 200, started, func(line string) text.Match {
		t := strings.TrimSpace(line)
		if strings.HasSuffix(t, "hairpin_mode") && started(t) {
			return text.Hit
		}
		if c.ok && (t == "0" || t == "1") {
			return text.Hit
		}
		return text.Miss
	})
	if cats == 0 {
		return 0
	}
	return min(text.RatioScore(matched, total, 95), 95)
}
