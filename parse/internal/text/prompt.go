package text

import (
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// CollapseSpace trims s and turns every run of spaces and tabs into one
// space.
func CollapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var (
	// promptRe matches the shell prompts people paste with command
	// output: "root@node1:~# cmd", "user@node1:/tmp$ cmd", "[root@node1
	// ~]# cmd".
	// "[root@node1:~]$ cmd" too.
	promptRe = lazyre.New(`^(?:[A-Za-z0-9._-]+@([A-Za-z0-9._-]+):[^#$ \t]*\s?[#$]|\[[A-Za-z0-9._-]+@([A-Za-z0-9._-]+)(?:[\s:][^\]]*)?\]\s?[#$])\s*(.*)$`)
	// zshPromptRe matches zsh's default prompt, "user@host dir % cmd".
	zshPromptRe = lazyre.New(`^[A-Za-z0-9._-]+@([A-Za-z0-9._-]+)(?:\s+[^%#$\s]+)?\s%\s?(.*)$`)
	// hostDirPromptRe matches a prompt without a user: "node1:~$ cmd",
	// "controlplane:/var/log/containers$ cmd", SUSE's "node1:~ # cmd".
	hostDirPromptRe = lazyre.New(`^([A-Za-z][A-Za-z0-9._-]{0,62}):(~[^\s#$%]*|/(?:[^/\s#$%][^\s#$%]*)?) ?[#$%]\s+(\S.*)$`)
	// hostPromptRe matches "node1 $ cmd" and "node1 # cmd", the prompt of
	// PS1='\h \$ ' (Container-Optimized OS, Flatcar), and "node1 ~ #
	// cmd", Gentoo's PS1='\h \W \$ ' in the home directory or at the
	// root (of other directories \W gives a bare name, which is not
	// taken: "eth0 up # note" is no prompt).
	hostPromptRe = lazyre.New(`^([A-Za-z][A-Za-z0-9._-]{0,62})(?: ~(?:/\S*)?| /)? [#$%] (\S.*)$`)
	// powerlinePromptRe matches the prompt of netshoot's zsh theme, the
	// host and the home directory between runs of two spaces (the theme's
	// separators, as pasted): "app-6d8b4f7c9a-x2vqp  ~  tcpdump -i any".
	powerlinePromptRe = lazyre.New(`^([A-Za-z0-9][A-Za-z0-9._-]{0,62})  ~[^\s]*  (\S.*)$`)
)

// HostPrompt recognizes a prompt that names its host, bash's ("user@host:dir#",
// "[user@host dir]$", "host:dir$", "host $") or zsh's ("user@host dir %",
// netshoot's "host  ~  cmd"), and returns the host and the command after it.
func HostPrompt(line string) (host, cmd string, ok bool) {
	if !mayBePrompt(line) {
		return "", "", false
	}
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
	if m := hostDirPromptRe.FindStringSubmatch(line); m != nil {
		return m[1], strings.TrimSpace(m[3]), true
	}
	if m := hostPromptRe.FindStringSubmatch(line); m != nil && hasLetter(m[1]) {
		return m[1], strings.TrimSpace(m[2]), true
	}
	if m := powerlinePromptRe.FindStringSubmatch(line); m != nil && hasLetter(m[1]) {
		return m[1], strings.TrimSpace(m[2]), true
	}
	return "", "", false
}

// mayBePrompt reports whether line holds what each prompt HostPrompt
// knows holds: a prompt's sign ('#', '$' or '%'), or the separator of
// netshoot's theme. The lines of most command output hold neither, and
// are told without the patterns, which a format's sniffer tries on
// every line of every file's head.
func mayBePrompt(line string) bool {
	return strings.ContainsAny(line, "#$%") || strings.Contains(line, "  ~")
}

// hasLetter reports whether s holds a letter.
func hasLetter(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

// Prompt reports whether line is a shell prompt followed by a command, and
// returns the host named in the prompt ("" for a bare "$ " or "# ") and the
// command. Lines starting with '#' are treated as prompts too, since in a
// pasted session they are either a root prompt or a comment; cmd is then the
// rest of the line.
func Prompt(line string) (host, cmd string, ok bool) {
	if host, cmd, ok := HostPrompt(line); ok {
		return host, cmd, true
	}
	if rest, found := strings.CutPrefix(line, "#"); found {
		return "", strings.TrimSpace(rest), true
	}
	if rest, found := strings.CutPrefix(line, "$ "); found {
		return "", strings.TrimSpace(rest), true
	}
	if cmd, ok := PathPrompt(line); ok {
		return "", cmd, true
	}
	return "", "", false
}

// PathPrompt recognizes BusyBox ash's prompt, the working directory and
// the sign ("/ # cat /etc/resolv.conf", "~ $ nslookup web"), which `kubectl
// exec -it POD -- sh` of busybox and alpine shows, and oh-my-zsh's ("➜  ~
// kubectl get pods"), and returns the command after it: "" for the bare
// prompt a paste ends with ("/ # "). It names no host.
func PathPrompt(line string) (cmd string, ok bool) {
	m := pathPromptRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1] + m[2]), true
}

// pathPromptRe matches BusyBox ash's prompt, with its command or alone;
// and oh-my-zsh's default theme, an arrow before the directory's name and
// its git branch ("➜  ~ kubectl get pods", "➜  repo git:(main) ✗ make").
var pathPromptRe = lazyre.New(`^(?:(?:/[\w./-]*|~[\w./-]*) [#$](?: (\S.*)| ?)|➜ +[^\s]+(?: git:\([^)\s]*\))?(?: ✗)?(?: +(\S.*)| ?))$`)

// NodeLine recognizes a node marker or a shell prompt, which name the node
// of the lines below them, and updates node. It returns the prompt's
// command ("" for a marker or a bare prompt).
func NodeLine(line string, node *string) (cmd string, ok bool) {
	if n, ok := NodeMarker(line); ok {
		*node = n
		return "", true
	}
	host, cmd, ok := Prompt(line)
	if ok && host != "" && !ClusterClient(cmd) {
		*node = host
	}
	return cmd, ok
}

// NodeMarker recognizes the lines that name the node of the output that
// follows when the output of several nodes is concatenated into one file:
// ">>> 172.27.138.251" (a for-each-node loop's echo) and "=== node1 ==="
// banners. It returns the node.
func NodeMarker(line string) (string, bool) {
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

// Program returns the program a command line runs, past wrappers such as
// sudo, timeout N and ip netns exec NS.
func Program(cmd string) string {
	f := strings.Fields(cmd)
	for len(f) > 0 {
		switch path.Base(f[0]) {
		case "sudo", "nice", "ionice":
			f = f[1:]
			continue
		case "timeout":
			if len(f) > 1 {
				f = f[2:]
				continue
			}
		case "ip":
			if len(f) > 3 && f[1] == "netns" && f[2] == "exec" {
				f = f[4:]
				continue
			}
		}
		break
	}
	if len(f) == 0 {
		return ""
	}
	return strings.TrimSuffix(path.Base(f[0]), ":")
}

// SkipBlanks returns the index of the first byte of s at or after i that
// is not a space or a tab (len(s) when there is none).
func SkipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// IsPromptOrMarker reports whether line is a shell prompt, a pasted
// command or a node marker: lines that end the output before them.
func IsPromptOrMarker(line string) bool {
	if _, ok := NodeMarker(line); ok {
		return true
	}
	if _, _, ok := Prompt(line); ok {
		return true
	}
	_, _, ok := ShellCommand(line)
	return ok
}
