// Package anon replaces the addresses and names of a report by stable
// tokens, so that it can be shared without the addresses, host, node, pod,
// namespace and cluster names and MAC addresses of the network it
// describes.
//
// IP addresses (v4 and v6) are mapped prefix-preservingly (Crypto-PAn):
// the same address always gives the same token, an address of a subnet
// gives an address of the subnet's token, so subnets stay recognizable.
// Loopback, unspecified, multicast and broadcast addresses are kept. MAC
// addresses become locally administered ones. Names become a kind and a
// hash ("node-3fa9c1", "pod-0b12de"); Kubernetes' own names (kube-system,
// kube-proxy, coredns ...) are kept. The mapping depends on a key only:
// two runs with the same key give the same tokens.
package anon

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"sort"
	"strings"
	"sync"
)

// Anonymizer maps addresses and names to tokens. Its methods may be called
// from several goroutines.
type Anonymizer struct {
	key  []byte
	pan  *cryptoPAn
	mu   sync.Mutex
	kind map[string]string // known name -> its kind ("node", "pod" ...)
	// prefix holds the known names that start with a system component's
	// name and '-', and that name.
	prefix map[string]string
	// names are the known names; byFirst the same by their first byte,
	// longest first (a longer name is tried before one it starts with),
	// rebuilt when sorted is false. A map handed out is never changed.
	names   []string
	byFirst map[byte][]string
	sorted  bool
	used    map[string]Mapping // original -> what it became, for Mappings
}

// Mapping is one original value and the token that replaced it.
type Mapping struct {
	// Kind is "ip", "mac", or a name's kind ("node", "pod", "namespace" ...).
	Kind     string `json:"kind"`
	Original string `json:"original"`
	Token    string `json:"token"`
}

// New returns an Anonymizer whose mapping is derived from key; an empty
// key is replaced by a random one, making the mapping consistent within
// the run only.
func New(key string) *Anonymizer {
	var secret []byte
	if key == "" {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // never fails (crypto/rand panics instead)
	} else {
		sum := sha256.Sum256([]byte("netmortem-anonymize\x00" + key))
		secret = sum[:]
	}
	var panKey [32]byte
	copy(panKey[:], mac(secret, "crypto-pan"))
	return &Anonymizer{key: secret, pan: newCryptoPAn(panKey), kind: map[string]string{}, prefix: map[string]string{}, used: map[string]Mapping{}}
}

// mac is HMAC-SHA256 of s under key.
func mac(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

// AddName makes name known as a name of kind (node, host, pod, namespace,
// cluster, service ...), to be replaced wherever it appears as a whole
// word (bounded by characters other than letters and digits). Kubernetes
// system names are not added. A name added under two kinds keeps the
// first.
func (a *Anonymizer) AddName(kind, name string) {
	name = strings.TrimSpace(name)
	if name == "" || systemName(name) {
		return
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return // an address: the address pass maps it
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.kind[name]; ok {
		return
	}
	if prefix, _, ok := systemPrefix(name); ok {
		// etcd-acmecorp-ledger, kube-apiserver-worker-1: the
		// component's name is kept, what follows it is replaced (see
		// nameToken).
		a.prefix[name] = prefix
	}
	a.kind[name] = kind
	a.names = append(a.names, name)
	a.sorted = false
}

// Mappings lists what was replaced so far, by kind and original.
func (a *Anonymizer) Mappings() []Mapping {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Mapping, 0, len(a.used))
	for _, m := range a.used {
		out = append(out, m)
	}
	SortMappings(out)
	return out
}

// SortMappings sorts ms by kind, then original, the order of Mappings and
// of the mapping file.
func SortMappings(ms []Mapping) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Kind != ms[j].Kind {
			return ms[i].Kind < ms[j].Kind
		}
		return ms[i].Original < ms[j].Original
	})
}

// record notes that original became token.
func (a *Anonymizer) record(kind, original, token string) string {
	a.mu.Lock()
	a.used[kind+"\x00"+original] = Mapping{Kind: kind, Original: original, Token: token}
	a.mu.Unlock()
	return token
}

// nameToken is the token of a known name of kind, recorded.
func (a *Anonymizer) nameToken(kind, name string) string {
	return a.record(kind, name, a.token(kind, name))
}

// token is the token of a name of kind: its kind and a hash. A name that
// starts with a system component's keeps it, and the rest becomes the
// token of the name it is when known (a static Pod's node:
// kube-apiserver-node-3fa9c1), or of a name of kind (etcd-pod-0b12de).
func (a *Anonymizer) token(kind, name string) string {
	a.mu.Lock()
	prefix, ok := a.prefix[name]
	var restKind string
	if ok {
		restKind = a.kind[name[len(prefix)+1:]]
	}
	a.mu.Unlock()
	if !ok {
		return kind + "-" + hex.EncodeToString(mac(a.key, "name\x00"+name))[:6]
	}
	rest := name[len(prefix)+1:]
	if restKind != "" {
		return prefix + "-" + a.nameToken(restKind, rest)
	}
	return prefix + "-" + a.token(kind, rest)
}

// Addr returns the token of an IP address: an address of the same family
// (a v4-mapped v6 address keeps its mapping). Loopback, unspecified,
// multicast and the broadcast address are kept.
func (a *Anonymizer) Addr(ip netip.Addr) netip.Addr {
	out := a.addr(ip)
	if out != ip {
		a.record("ip", ip.String(), out.String())
	}
	return out
}

// addr is Addr without recording the mapping.
func (a *Anonymizer) addr(ip netip.Addr) netip.Addr {
	if !ip.IsValid() || keptAddr(ip) {
		return ip
	}
	if ip.Is4In6() {
		return netip.AddrFrom16(a.pan.addr(ip.Unmap()).As16())
	}
	return a.pan.addr(ip)
}

// Prefix returns the token of a prefix: its address's token masked to the
// prefix's length, so that a subnet and its addresses still match.
func (a *Anonymizer) Prefix(p netip.Prefix) netip.Prefix {
	if !p.IsValid() {
		return p
	}
	if p.Addr() != p.Masked().Addr() { // an address with its subnet's length
		return netip.PrefixFrom(a.Addr(p.Addr()), p.Bits())
	}
	q, err := a.addr(p.Addr()).Prefix(p.Bits())
	if err != nil || q.Addr() == p.Addr() {
		return p
	}
	a.record("prefix", p.String(), q.String())
	return q
}

// keptAddr reports whether ip says nothing of the network it was seen on.
func keptAddr(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

// MAC returns the token of a MAC address written as six colon-separated
// bytes: a locally administered unicast address. The broadcast and zero
// addresses are kept; what is not a MAC address is returned as it is.
func (a *Anonymizer) MAC(s string) string {
	if !isMAC(s) {
		return s
	}
	lower := strings.ToLower(s)
	if lower == "ff:ff:ff:ff:ff:ff" || lower == "00:00:00:00:00:00" {
		return s
	}
	h := mac(a.key, "mac\x00"+lower)
	h[0] = h[0]&0xfc | 0x02 // locally administered, unicast
	var sb strings.Builder
	for i := range 6 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(hex.EncodeToString(h[i : i+1]))
	}
	return a.record("mac", lower, sb.String())
}

// isMAC reports whether s is six colon-separated hex bytes.
func isMAC(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return false
	}
	for _, p := range parts {
		if _, err := hex.DecodeString(p); err != nil || len(p) != 2 {
			return false
		}
	}
	return true
}
