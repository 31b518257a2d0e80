package anon

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

var (
	// hostname matches a DNS name of at least two labels whose last is a
	// top-level domain (tlds) and which is not inside a longer word or
	// path segment: api.acme-prod.corp.example, ip-10-0-1-5.ec2.internal.
	// Names under cluster.local and public registries' and projects'
	// domains (publicDomains) say nothing of the network and are kept.
	hostname = lazyre.New(`(?i)(?:^|[^A-Za-z0-9._@-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?:$|[^A-Za-z0-9_-])`)
	// email matches an e-mail address.
	email = lazyre.New(`[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,24}`)
	// dashedMAC matches a MAC address written with dashes (00-22-4d-a8-ba-40).
	dashedMAC = lazyre.New(`(?:^|[^0-9A-Fa-f-])(?:[0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}(?:$|[^0-9A-Fa-f-])`)
)

// tlds are the top-level domains hostname takes a name's last label for:
// the generic ones, the names used inside companies' networks, and the
// country codes, these only after at least two other labels (a file
// name's extension is often one: README.md, run.sh).
var tlds = map[string]int{
	"com": 2, "net": 2, "org": 2, "edu": 2, "gov": 2, "mil": 2, "int": 2, "io": 2, "dev": 2, "app": 2,
	"cloud": 2, "local": 2, "internal": 2, "corp": 2, "lan": 2, "home": 2, "example": 2, "test": 2,
	"invalid": 2, "localdomain": 2, "intranet": 2, "private": 2, "biz": 2, "info": 2, "ai": 2, "me": 2,
	"tech": 2, "online": 2, "site": 2, "xyz": 2, "cn": 2, "de": 2, "uk": 2, "jp": 2, "fr": 2, "nl": 2,
	"ru": 2, "br": 2, "au": 2, "ca": 2, "us": 2, "eu": 2, "ch": 2, "se": 2, "no": 3, "es": 2, "kr": 2,
}

// extensions are two-letter file name extensions, never taken for a
// country code: capture.pcap.gz, notes.v2.md.
var extensions = map[string]bool{
	"gz": true, "xz": true, "bz": true, "md": true, "sh": true, "py": true, "rs": true, "pl": true,
	"so": true, "js": true, "ts": true, "go": true, "rb": true, "cc": true, "cs": true, "ps": true,
	"db": true, "el": true, "ml": true, "hs": true, "kt": true, "tf": true, "mk": true, "7z": true,
}

// publicDomains are kept: registries', projects' and the cluster's own.
var publicDomains = []string{
	"cluster.local", "k8s.io", "kubernetes.io", "docker.io", "docker.com", "gcr.io", "quay.io", "ghcr.io",
	"github.com", "githubusercontent.com", "golang.org", "go.dev", "projectcalico.org", "tigera.io",
	"cilium.io", "coredns.io", "example.com", "example.org", "example.net",
}

// isHostname reports whether name, a match of hostname, is a DNS name to
// replace.
func isHostname(name string) bool {
	lower := strings.ToLower(name)
	labels := strings.Split(lower, ".")
	need, ok := tlds[labels[len(labels)-1]]
	if !ok {
		need = 3 // any other two letters: a country code after two labels
		if last := labels[len(labels)-1]; len(last) != 2 || extensions[last] {
			return false
		}
	}
	if len(labels) < need {
		return false
	}
	for _, d := range publicDomains {
		if lower == d || strings.HasSuffix(lower, "."+d) {
			return false
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return false
	}
	// AWS's names of instances hold only their address, which the
	// address pass replaces: ip-10-0-1-5.ec2.internal,
	// ip-10-0-1-5.us-west-2.compute.internal.
	if awsName.MatchString(lower) {
		return false
	}
	return true
}

var awsName = lazyre.New(`^ip-[0-9]{1,3}(?:-[0-9]{1,3}){3}\.(?:ec2|[a-z]{2}-[a-z]+-[0-9]\.compute)\.internal$`)

// hostToken replaces the DNS name in a match of hostname.
func (a *Anonymizer) hostToken(m string) string {
	sub := hostname.FindStringSubmatchIndex(m)
	name := m[sub[2]:sub[3]]
	if !isHostname(name) {
		return m
	}
	return m[:sub[2]] + a.nameToken("host", strings.ToLower(name)) + m[sub[3]:]
}

// emailToken replaces an e-mail address.
func (a *Anonymizer) emailToken(m string) string {
	return a.nameToken("email", strings.ToLower(m))
}

// dashedMACToken replaces a MAC address written with dashes, keeping the
// dashes.
func (a *Anonymizer) dashedMACToken(m string) string {
	start, end := 0, len(m)
	for start < end && !isHex(m[start]) {
		start++
	}
	for end > start && !isHex(m[end-1]) {
		end--
	}
	tok := a.MAC(strings.ReplaceAll(m[start:end], "-", ":"))
	return m[:start] + strings.ReplaceAll(tok, ":", "-") + m[end:]
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// ciscoMAC reads a MAC address in Cisco's notation (0022.4da8.ba40) and
// returns it with colons.
func ciscoMAC(s string) (string, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if len(p) != 4 {
			return "", false
		}
		for i := 0; i < 4; i++ {
			if !isHex(p[i]) {
				return "", false
			}
		}
		for i := 0; i < 4; i += 2 {
			if b.Len() > 0 {
				b.WriteByte(':')
			}
			b.WriteString(p[i : i+2])
		}
	}
	return b.String(), true
}

// dotted writes a MAC address given with colons in Cisco's notation.
func dotted(m string) string {
	h := strings.ReplaceAll(m, ":", "")
	if len(h) != 12 {
		return m
	}
	return h[0:4] + "." + h[4:8] + "." + h[8:12]
}

// zeroPadded reads an IPv4 address written with leading zeros
// (010.001.002.003), which netip refuses; the octets are read as decimal.
func zeroPadded(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	padded := false
	for i, p := range parts {
		if p == "" || len(p) > 3 {
			return netip.Addr{}, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 {
			return netip.Addr{}, false
		}
		padded = padded || len(p) > 1 && p[0] == '0'
		b[i] = byte(n)
	}
	return netip.AddrFrom4(b), padded
}
