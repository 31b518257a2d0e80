package host

import (
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// The /proc/sys files people dump one by one instead of running sysctl:
// `head /proc/sys/net/bridge/*` and `tail -n +1 file...` ("==> path <=="
// before each file's content), `cat /proc/sys/net/ipv4/ip_forward` after a
// prompt naming the file, a loop printing "path: value", and `grep -r .`
// run inside /proc/sys/net/ipv4/conf ("all/rp_filter:1").

// headerRe matches the header head and tail print before each file when
// given several: "==> /proc/sys/net/bridge/bridge-nf-call-iptables <==".
var headerRe = lazyre.New(`==> (\S(?:.*\S)?) <==\s*$`)

// fileHeader returns the path of a head/tail header line, anywhere on the
// line (a pasted prompt may run into the first one).
func fileHeader(line string) (string, bool) {
	m := headerRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// procFiles are the files a command prints one value each of, in order:
// "cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/all/rp_filter".
// Globs, and commands of other programs, name none.
func procFiles(cmd string) []string {
	f := strings.Fields(strings.Split(cmd, "|")[0])
	switch text.Program(cmd) {
	case "cat", "head", "tail":
	default:
		return nil
	}
	var out []string
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "/proc/sys/") {
			if strings.ContainsAny(w, "*?[{") || sysctlPathName(w) == "" {
				return nil
			}
			out = append(out, w)
		}
	}
	if strings.Contains(cmd, "==>") {
		return nil // head of several files: its headers name them
	}
	return out
}

// confKeys are the per-interface keys of net.ipv4.conf.<interface> and
// net.ipv6.conf.<interface> that a relative `grep -r .` run in the conf
// directory prints as "<interface>/<key>:value".
var confKeys = map[string]bool{
	"rp_filter": true, "log_martians": true, "accept_local": true, "accept_redirects": true,
	"accept_source_route": true, "arp_accept": true, "arp_announce": true, "arp_filter": true,
	"arp_ignore": true, "arp_notify": true, "forwarding": true, "proxy_arp": true,
	"proxy_arp_pvlan": true, "route_localnet": true, "send_redirects": true, "secure_redirects": true,
	"shared_media": true, "src_valid_mark": true, "mc_forwarding": true, "bootp_relay": true,
	"disable_policy": true, "disable_xfrm": true, "promote_secondaries": true, "medium_id": true,
	"arp_evict_nocarrier": true, "drop_gratuitous_arp": true, "drop_unicast_in_l2_multicast": true,
	"ignore_routes_with_linkdown": true, "tag": true, "force_igmp_version": true,
}

// relativeConfLine reads "all/rp_filter:1", a line of `grep -r .` run in
// /proc/sys/net/ipv4/conf: the interface and a known key of it.
func relativeConfLine(line string) (key, value string, ok bool) {
	p, v, found := strings.Cut(strings.TrimSpace(line), ":")
	if !found {
		return "", "", false
	}
	dir, leaf := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" || strings.ContainsAny(dir, "/ \t") || !confKeys[leaf] {
		return "", "", false
	}
	return "net.ipv4.conf." + strings.ReplaceAll(dir, ".", "/") + "." + leaf, text.CollapseSpace(v), true
}
