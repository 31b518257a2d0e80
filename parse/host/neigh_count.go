package host

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NeighCountFormat reads the size of a neighbor table printed as a count
// of its listing.
var NeighCountFormat = &format.Format{
	Name:    "neigh-count",
	Kind:    model.KindNeighbors,
	Command: "arp -an | wc -l, ip neigh | wc -l, ip -4 neigh show nud all | wc -l (any listing of a neighbor table counted by wc -l or grep -c)",
	Doc: "the count below the command line, with the command and its family (arp and ip -4: IPv4, ip -6: " +
		"IPv6, ip neigh: both); the command must be on the prompt line above the count, which names the node",
	Sniff: sniffNeighCount,
	Parse: format.Records(readNeighCounts, func(s *model.Snapshot, out []model.NeighborCount) {
		s.NeighborCounts = append(s.NeighborCounts, out...)
	}, "neighbor counts"),
}

// NeighCounts parses the counts of neighbor table listings: a shell prompt
// whose command lists a neighbor table and counts its lines (arp -an | wc
// -l), then the count. A line that is not a count of such a command is
// reported with its position and the rest is read. name is used only in
// positions.
func NeighCounts(r io.Reader, name string) ([]model.NeighborCount, error) {
	return format.ReadAll(r, name, readNeighCounts)
}

// neighCountCmd reads a command line that counts a neighbor table's
// listing: its family ("ipv4", "ipv6" or "" for both), and whether it is
// one.
func neighCountCmd(cmd string) (family string, ok bool) {
	parts := strings.Split(cmd, "|")
	if len(parts) < 2 {
		return "", false
	}
	last := strings.Fields(parts[len(parts)-1])
	counts := len(last) >= 2 && (last[0] == "wc" && last[1] == "-l" || last[0] == "grep" && last[1] == "-c")
	if !counts {
		return "", false
	}
	first := strings.TrimSpace(parts[0])
	f := strings.Fields(first)
	switch text.Program(first) {
	case "arp":
		return "ipv4", true
	case "ip":
		for len(f) > 0 && f[0] != "ip" && !strings.HasSuffix(f[0], "/ip") {
			f = f[1:] // sudo, env ...
		}
		if len(f) == 0 || !neighCmd(f) {
			return "", false
		}
		for _, a := range f {
			switch a {
			case "-4":
				return "ipv4", true
			case "-6":
				return "ipv6", true
			}
		}
		return "", true
	}
	return "", false
}

func readNeighCounts(r io.Reader, src *format.File, errs *model.ErrorList) []model.NeighborCount {
	var out []model.NeighborCount
	cmd, family, counting := "", "", false
	text.ReadLines(r, src, errs, text.Hooks{Command: func(c string) {
		cmd = c
		family, counting = neighCountCmd(c)
	}}, func(l *text.Line) {
		if !counting {
			l.Syntax(fmt.Errorf("expected a count below a command that counts a neighbor table (arp -an | wc -l), got %q", l.Trimmed))
			return
		}
		n, err := strconv.Atoi(l.Trimmed)
		if err != nil || n < 0 {
			l.Syntax(fmt.Errorf("expected the count of %q, got %q", cmd, l.Trimmed))
			return
		}
		out = append(out, model.NeighborCount{Node: l.Node, Family: family, Count: n, Command: cmd, Pos: l.Pos()})
		counting = false // one count a command
	})
	return out
}

func sniffNeighCount(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	counting, counts, other := false, 0, 0
	for _, line := range text.HeadLines(head, 200) {
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if _, c, ok := text.Prompt(line); ok {
			_, counting = neighCountCmd(c)
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && counting {
			counts++
			counting = false
			continue
		}
		other++
	}
	if counts == 0 || other > 0 {
		return 0
	}
	return 98 // above neigh, which would read the command's table
}
