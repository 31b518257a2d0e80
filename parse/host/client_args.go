package host

import (
	"net"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// clientTools are the programs whose transcripts the client format reads.
var clientTools = map[string]string{
	"curl": "curl", "wget": "wget", "nc": "nc", "ncat": "nc", "netcat": "nc",
	"telnet": "telnet", "dig": "dig", "nslookup": "nslookup", "kubectl": "kubectl", "oc": "kubectl", "arping": "arping",
}

// clientCmd is what a client's command line says of its destination.
type clientCmd struct {
	line   string
	tool   string // "" for another program
	host   string // the destination host (name or address)
	port   uint16 // 0 when not given and no default
	name   string // the name a DNS lookup asks for
	server string // the DNS server a lookup asks (dig @S, nslookup NAME S)
	sport  uint16 // the DNS server's port (dig -p)
}

// curlArgFlags are curl's and wget's short and long options that take
// an argument in the next word.
var curlArgFlags = map[string]bool{
	"-H": true, "-d": true, "-o": true, "-X": true, "-u": true, "-m": true, "-w": true, "-A": true,
	"-e": true, "-b": true, "-c": true, "-F": true, "-T": true, "-x": true, "-E": true, "-K": true,
	"-r": true, "-O": false, "-U": true, "-t": true, "-P": true,
	"--header": true, "--data": true, "--output": true, "--request": true, "--user": true,
	"--max-time": true, "--connect-timeout": true, "--resolve": true, "--write-out": true,
	"--user-agent": true, "--cacert": true, "--cert": true, "--key": true, "--proxy": true,
	"--interface": true, "--data-raw": true, "--data-binary": true, "--retry": true, "--url": true,
	"--timeout": true, "--tries": true, "--output-document": true, "--unix-socket": true,
}

// digTypes are the record types and classes a dig command line may name.
var digTypes = map[string]bool{
	"a": true, "aaaa": true, "srv": true, "any": true, "mx": true, "txt": true, "ptr": true,
	"ns": true, "cname": true, "soa": true, "in": true, "ch": true, "axfr": true, "caa": true,
}

// parseClientCmd reads the client command of a command line: after
// wrappers (sudo, timeout) and, for `kubectl exec POD -- CMD`, the command
// run in the container.
func parseClientCmd(cmd string) clientCmd {
	c := clientCmd{line: cmd}
	stage, _, _ := strings.Cut(cmd, "|")
	f := strings.Fields(stage)
	at := -1
	for i, w := range f {
		tool, ok := clientTools[path.Base(w)]
		if !ok {
			continue
		}
		// kubectl exec POD -- curl ...: the client is the command run.
		if at < 0 || c.tool == "kubectl" && tool != "kubectl" {
			c.tool, at = tool, i
			if tool != "kubectl" {
				break
			}
		}
	}
	if at < 0 {
		return c
	}
	args := f[at+1:]
	switch c.tool {
	case "curl", "wget":
		for i := 0; i < len(args); i++ {
			w := args[i]
			if strings.HasPrefix(w, "-") {
				if curlArgFlags[w] && !strings.Contains(w, "=") {
					i++
				}
				continue
			}
			c.host, c.port = urlHostPort(w)
			if c.host != "" {
				break
			}
		}
	case "nc", "telnet":
		var pos []string
		for i := 0; i < len(args); i++ {
			w := args[i]
			if strings.HasPrefix(w, "-") {
				if last := w[len(w)-1]; len(w) > 1 && strings.IndexByte(ncArgFlags, last) >= 0 {
					i++
				}
				continue
			}
			pos = append(pos, w)
		}
		if len(pos) > 0 {
			c.host = strings.Trim(pos[0], "[]")
		}
		if len(pos) > 1 {
			if p, err := strconv.ParseUint(pos[1], 10, 16); err == nil {
				c.port = uint16(p)
			}
		} else if c.tool == "telnet" {
			c.port = 23
		}
	case "dig":
		c.sport = 53
		for i := 0; i < len(args); i++ {
			w := args[i]
			switch {
			case strings.HasPrefix(w, "@"):
				c.server = w[1:]
			case w == "-p" && i+1 < len(args):
				if p, err := strconv.ParseUint(args[i+1], 10, 16); err == nil {
					c.sport = uint16(p)
				}
				i++
			case strings.HasPrefix(w, "-p"):
				if p, err := strconv.ParseUint(w[2:], 10, 16); err == nil {
					c.sport = uint16(p)
				}
			case w == "-t" || w == "-c" || w == "-b" || w == "-f" || w == "-k" || w == "-q" || w == "-x" || w == "-y":
				i++
			case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+") || digTypes[strings.ToLower(w)]:
			case c.name == "":
				c.name = w
			}
		}
	case "nslookup":
		c.sport = 53
		var pos []string
		for _, w := range args {
			if !strings.HasPrefix(w, "-") {
				pos = append(pos, w)
			}
		}
		if len(pos) > 0 {
			c.name = pos[0]
		}
		if len(pos) > 1 {
			c.server = pos[1]
		}
	}
	return c
}

// urlHostPort returns the host and port a URL (or a bare host[:port])
// names, the port defaulting to the scheme's.
func urlHostPort(s string) (string, uint16) {
	s = strings.Trim(s, `"'`)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return "", 0
	}
	host := u.Hostname()
	if !plausibleHost(host) {
		return "", 0
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "", 0
		}
		return host, uint16(n)
	}
	switch u.Scheme {
	case "https":
		return host, 443
	case "http":
		return host, 80
	}
	return host, 0
}

// plausibleHost reports whether s can be a host name or an address.
func plausibleHost(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// hostPort formats a destination: "10.0.0.1:80", "[fd00::1]:80",
// "web.default:80", or the host alone when the port is 0.
func hostPort(host string, port uint16) string {
	if port == 0 {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// addrPort returns host and port as an address when host is an IP
// address.
func addrPort(host string, port uint16) netip.AddrPort {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(a.Unmap(), port)
}

// splitTarget splits a printed destination "10.0.0.1:443",
// "[fd00::1]:443", "host:80" or a bare host into host and port.
func splitTarget(s string) (string, uint16) {
	s = strings.TrimRight(s, ".,;:)")
	if h, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			return h, uint16(n)
		}
	}
	return strings.Trim(s, "[]"), 0
}
