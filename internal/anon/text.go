package anon

import (
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// systemNames are Kubernetes' own names, kept as they are: they say what
// runs, not whose cluster it is. A pod named after one of them and a
// suffix (coredns-5d78c9869d-x2x9q) is kept too.
var systemNames = []string{
	"kube-system", "kube-public", "kube-node-lease", "default",
	"kubernetes", "kube-proxy", "kube-dns", "coredns", "kube-apiserver",
	"kube-controller-manager", "kube-scheduler", "etcd", "kubelet",
	"calico-node", "calico-kube-controllers", "calico-system", "tigera-operator",
	"cilium", "cilium-operator", "kube-flannel", "kube-flannel-ds", "flannel",
	"weave-net", "kube-router", "metrics-server", "local-path-provisioner",
	"localhost", "ingress-nginx", "nodelocaldns", "node-local-dns", "scheduler", "controller-manager",
}

// systemName reports whether name is a Kubernetes system name, or one of
// them (but default, kubernetes and localhost) followed by '-' and a
// suffix that a controller generated (a ReplicaSet's hash, a Pod's random
// suffix, an ordinal): coredns-5d78c9869d-x2x9q, kube-proxy-7xk2p. A name
// that only starts like one (etcd-acmecorp-ledger) is not.
func systemName(name string) bool {
	if slices.Contains(systemNames, name) {
		return true
	}
	_, rest, ok := systemPrefix(name)
	return ok && generated.MatchString(rest)
}

// systemPrefix splits name into the longest system name it starts with
// (but default, kubernetes and localhost) and what follows its '-'.
func systemPrefix(name string) (prefix, rest string, ok bool) {
	for _, s := range systemNames {
		if s == "default" || s == "kubernetes" || s == "localhost" || len(s) <= len(prefix) {
			continue
		}
		if r, found := strings.CutPrefix(name, s+"-"); found && r != "" {
			prefix, rest, ok = s, r, true
		}
	}
	return prefix, rest, ok
}

// generated matches the suffixes controllers add to a name: a Pod's five
// random characters, a ReplicaSet's hash and the Pod's suffix after it, a
// StatefulSet's ordinal, a ControllerRevision's hash.
var generated = lazyre.New(`^(?:[a-z0-9]{5}|[bcdfghjklmnpqrstvwxz2456789]{6,10}(?:-[a-z0-9]{5})?|[0-9a-f]*[0-9][0-9a-f]*(?:-[a-z0-9]{5})?|[0-9]+)$`)

// Text returns s with its known names, e-mail addresses, DNS names (see
// hostname), IP addresses (plain, with a port after ':' or '.', with a
// prefix length, with leading zeros, or written with dashes as in
// ip-10-0-0-1) and MAC addresses (with colons, dashes, or Cisco's dots)
// replaced by their tokens.
func (a *Anonymizer) Text(s string) string {
	if s == "" {
		return s
	}
	s = a.replaceNames(s)
	s = email.ReplaceAllStringFunc(s, a.emailToken)
	s = hostname.ReplaceAllStringFunc(s, a.hostToken)
	s = dashedMAC.ReplaceAllStringFunc(s, a.dashedMACToken)
	s = hexRun.ReplaceAllStringFunc(s, a.addrRun)
	return dashed.ReplaceAllStringFunc(s, a.dashedAddr)
}

// wordByte reports whether c is part of a word: a name is only replaced
// where it is not part of a longer one.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// replaceNames replaces the known names that appear in s as whole words,
// the longest first at each place.
func (a *Anonymizer) replaceNames(s string) string {
	byFirst := a.nameIndex()
	if len(byFirst) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && wordByte(s[i-1]) {
			continue
		}
		for _, n := range byFirst[s[i]] {
			end := i + len(n)
			if end > len(s) || s[i:end] != n || end < len(s) && wordByte(s[end]) {
				continue
			}
			b.WriteString(s[last:i])
			b.WriteString(a.nameToken(a.kindOf(n), n))
			last = end
			i = end - 1
			break
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nameIndex returns the known names by their first byte, the longest
// first, built again when names were added since.
func (a *Anonymizer) nameIndex() map[byte][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sorted {
		names := slices.Clone(a.names)
		sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		a.byFirst = map[byte][]string{}
		for _, n := range names {
			a.byFirst[n[0]] = append(a.byFirst[n[0]], n)
		}
		a.sorted = true
	}
	return a.byFirst
}

// kindOf is the kind name was added as.
func (a *Anonymizer) kindOf(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.kind[name]
}

var (
	// hexRun matches what may be an address: a run of hex digits, colons
	// and dots, with one colon or dot at least, not inside a word (or
	// after a word and a colon, as in iptables' to:10.0.0.1:53), perhaps
	// followed by a prefix length. A run of hex digits alone is no
	// address, and must not take the address after it for a prefix
	// length: in /data/001/10.0.0.5.pcap, "/10" is not 001's.
	hexRun = lazyre.New(`(?:^|[^0-9A-Za-z_:.]|[A-Za-z]:)[0-9A-Fa-f]*[:.][0-9A-Fa-f:.]*[0-9A-Fa-f:](?:/[0-9]{1,3})?`)
	// ipv4 matches a dotted-quad inside such a run.
	ipv4 = lazyre.New(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}`)
	// dashed matches an IPv4 address written with dashes (ip-10-0-0-1,
	// 10-244-1-5.ns.pod).
	dashed = lazyre.New(`(?:^|[^0-9])[0-9]{1,3}(?:-[0-9]{1,3}){3}(?:$|[^0-9-])`)
)

// addrRun replaces the addresses in one run matched by hexRun.
func (a *Anonymizer) addrRun(m string) string {
	lead := ""
	if m != "" && !strings.ContainsRune("0123456789abcdefABCDEF:.", rune(m[0])) {
		lead, m = m[:1], m[1:]
	}
	run, bits := m, ""
	if i := strings.IndexByte(m, '/'); i >= 0 {
		run, bits = m[:i], m[i:]
	}
	// Trailing punctuation belongs to the sentence ("at 10.0.0.1.").
	core := strings.TrimRight(run, ".:")
	tail := run[len(core):]
	if isMAC(core) {
		return lead + a.MAC(core) + tail + bits
	}
	if m, ok := ciscoMAC(core); ok {
		return lead + dotted(a.MAC(m)) + tail + bits
	}
	if ip, ok := zeroPadded(core); ok && bits == "" {
		return lead + a.Addr(ip).String() + tail
	}
	if ip, err := netip.ParseAddr(core); err == nil && (ip.Is4() || strings.Count(core, ":") >= 2) {
		if bits != "" {
			if n, err := strconv.Atoi(bits[1:]); err == nil && n <= ip.BitLen() && tail == "" {
				return lead + a.Prefix(netip.PrefixFrom(ip, n)).String()
			}
		}
		return lead + a.Addr(ip).String() + tail + bits
	}
	// tcpdump's IPv6 address and port: fd00::1.443.
	if i := strings.LastIndexByte(core, '.'); i > 0 && strings.Count(core[:i], ":") >= 2 {
		if ip, err := netip.ParseAddr(core[:i]); err == nil && ip.Is6() {
			if _, err := strconv.Atoi(core[i+1:]); err == nil {
				return lead + a.Addr(ip).String() + core[i:] + tail + bits
			}
		}
	}
	// An address with a port (10.0.0.1:80, tcpdump's 10.0.0.1.80), or
	// several addresses joined.
	return lead + ipv4.ReplaceAllStringFunc(run, func(q string) string {
		ip, err := netip.ParseAddr(q)
		if err != nil {
			return q
		}
		return a.Addr(ip).String()
	}) + bits
}

// dashedAddr replaces an IPv4 address written with dashes.
func (a *Anonymizer) dashedAddr(m string) string {
	start, end := 0, len(m)
	for start < end && (m[start] < '0' || m[start] > '9') {
		start++
	}
	for end > start && (m[end-1] < '0' || m[end-1] > '9') {
		end--
	}
	ip, err := netip.ParseAddr(strings.ReplaceAll(m[start:end], "-", "."))
	if err != nil || keptAddr(ip) {
		return m
	}
	return m[:start] + strings.ReplaceAll(a.Addr(ip).String(), ".", "-") + m[end:]
}
