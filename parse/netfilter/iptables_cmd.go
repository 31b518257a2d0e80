package netfilter

import (
	"strconv"
	"strings"
)

// parseIPTablesCmd reads an iptables command line of a prompt: the family,
// the form of its output, the table and the chain. ok is false for other
// commands.
func parseIPTablesCmd(cmd string) (iptCmd, bool) {
	if i := strings.IndexByte(cmd, '|'); i >= 0 {
		cmd = cmd[:i]
	}
	f := strings.Fields(cmd)
	at := -1
	for i, w := range f {
		base := w[strings.LastIndexByte(w, '/')+1:]
		if strings.HasPrefix(base, "iptables") || strings.HasPrefix(base, "ip6tables") {
			at = i
			break
		}
	}
	if at < 0 {
		return iptCmd{}, false
	}
	tool := f[at][strings.LastIndexByte(f[at], '/')+1:]
	c := iptCmd{family: iptFamilyOf(tool), backend: iptToolBackend(tool)}
	if strings.HasSuffix(tool, "-save") {
		c.form = formSave
	} else if strings.Contains(tool, "restore") {
		return iptCmd{}, false
	}
	args := f[at+1:]
	listing := func(form string, i int) int {
		if c.form == "" {
			c.form = form
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			c.chain = args[i+1]
			return i + 1
		}
		return i
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-t" || a == "--table":
			if i+1 < len(args) {
				c.table = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--table="):
			c.table = a[len("--table="):]
		case a == "--list" || a == "-L":
			i = listing(formList, i)
		case a == "--list-rules" || a == "-S":
			i = listing(formRules, i)
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// clustered short options: -nvL, -vnxL, -tnat
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 't':
					if k+1 < len(a) {
						c.table = a[k+1:]
					} else if i+1 < len(args) {
						c.table = args[i+1]
						i++
					}
					k = len(a)
				case 'L':
					if k == len(a)-1 {
						i = listing(formList, i)
					} else if c.form == "" {
						c.form = formList
					}
				case 'S':
					if k == len(a)-1 {
						i = listing(formRules, i)
					} else if c.form == "" {
						c.form = formRules
					}
				}
			}
		default:
			// "iptables -L -n KUBE-SERVICES": a chain after other options
			if (c.form == formList || c.form == formRules) && c.chain == "" {
				if _, err := strconv.Atoi(a); err != nil {
					c.chain = a
				}
			}
		}
	}
	return c, true
}

func iptFamilyOf(tool string) string {
	if strings.HasPrefix(tool, "ip6tables") {
		return "ipv6"
	}
	if strings.HasPrefix(tool, "iptables") {
		return "ipv4"
	}
	return ""
}
