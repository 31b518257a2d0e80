package parse

import (
	"bytes"
	"regexp"
	"strings"
)

// Helpers shared by the host command parsers (sysctl, ipvsadm, ss, netstat,
// ip, arp, conntrack): pasted terminal sessions, node markers, whitespace.

// collapseSpace trims s and turns every run of spaces and tabs into one
// space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// promptRe matches the shell prompts people paste with command output:
// "root@node1:~# cmd", "user@node1:/tmp$ cmd", "[root@node1 ~]# cmd".
var promptRe = regexp.MustCompile(`^(?:[A-Za-z0-9._-]+@([A-Za-z0-9._-]+):[^#$ \t]*\s?[#$]|\[[A-Za-z0-9._-]+@([A-Za-z0-9._-]+)(?:\s[^\]]*)?\]\s?[#$])\s*(.*)$`)

// prompt reports whether line is a shell prompt followed by a command, and
// returns the host named in the prompt ("" for a bare "$ " or "# ") and the
// command. Lines starting with '#' are treated as prompts too, since in a
// pasted session they are either a root prompt or a comment; cmd is then the
// rest of the line.
func prompt(line string) (host, cmd string, ok bool) {
	if m := promptRe.FindStringSubmatch(line); m != nil {
		host = m[1]
		if host == "" {
			host = m[2]
		}
		return host, strings.TrimSpace(m[3]), true
	}
	if m := zshPromptRe.FindStringSubmatch(line); m != nil {
		return m[1], strings.TrimSpace(m[2]), true
	}
	if rest, found := strings.CutPrefix(line, "#"); found {
		return "", strings.TrimSpace(rest), true
	}
	if rest, found := strings.CutPrefix(line, "$ "); found {
		return "", strings.TrimSpace(rest), true
	}
	return "", "", false
}

// nodeLine recognizes a node marker or a shell prompt, which name the node
// of the lines below them, and updates node. It returns the prompt's
// command ("" for a marker or a bare prompt).
func nodeLine(line string, node *string) (cmd string, ok bool) {
	if n, ok := nodeMarker(line); ok {
		*node = n
		return "", true
	}
	host, cmd, ok := prompt(line)
	if ok && host != "" {
		*node = host
	}
	return cmd, ok
}

// nodeMarker recognizes the lines that name the node of the output that
// follows when the output of several nodes is concatenated into one file:
// ">>> 172.27.138.251" (a for-each-node loop's echo) and "=== node1 ==="
// banners. It returns the node.
func nodeMarker(line string) (string, bool) {
	if rest, ok := strings.CutPrefix(line, ">>> "); ok {
		f := strings.Fields(rest)
		if len(f) == 1 {
			return f[0], true
		}
		return "", false
	}
	for _, d := range []string{"===", "---", "###"} {
		rest, ok := strings.CutPrefix(line, d)
		if !ok {
			continue
		}
		rest, ok = strings.CutSuffix(strings.TrimRight(rest, " "), d)
		if !ok {
			continue
		}
		rest = strings.Trim(rest, " =-#")
		f := strings.Fields(rest)
		if len(f) == 2 && strings.EqualFold(f[0], "node") {
			return f[1], true
		}
		if len(f) == 1 && f[0] != "" {
			return f[0], true
		}
	}
	return "", false
}

// headLines returns up to max non-empty lines of head, without a final
// partial line unless head is all there is.
func headLines(head []byte, max int) []string {
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && len(head) == 64<<10 {
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
		s := normalizeLine(string(line))
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// isText reports whether head looks like text: no NUL bytes.
func isText(head []byte) bool {
	return bytes.IndexByte(head, 0) < 0
}

// ratioScore turns the share of lines a sniffer recognized into a score:
// high when nearly all are recognized, 0 below half.
func ratioScore(matched, total, max int) int {
	if matched == 0 || total == 0 || 2*matched < total {
		return 0
	}
	return max * matched / total
}
