package text

import "strings"

// The link-layer part of a tcpdump line: the direction and interface of
// -i any, and what -e prints before the IP part (a MAC address, or the
// word a MAC was replaced by in edited text).

// isDirection reports whether s is the packet direction tcpdump prints on
// -i any (In, Out) or its SLL packet type (M multicast, B broadcast, P to
// another host).
func isDirection(s string) bool {
	return s == "In" || s == "Out" || s == "M" || s == "B" || s == "P"
}

// skipIfindex drops the "ifindex N " tcpdump -e prints on -i any.
func skipIfindex(s string) string {
	r, ok := strings.CutPrefix(s, "ifindex ")
	if !ok {
		return s
	}
	n := leadingDigits(r)
	if n == "" || len(r) == len(n) || r[len(n)] != ' ' {
		return s
	}
	return r[len(n)+1:]
}

// kindAt returns what a tcpdump line shows at s: IP, IP6, ARP, a MAC
// address (-e) or the word that replaced one, "" for anything else.
func kindAt(s string) string {
	switch {
	case strings.HasPrefix(s, "IP6"):
		return "IP6"
	case strings.HasPrefix(s, "IP"):
		return "IP"
	case strings.HasPrefix(s, "ARP"):
		return "ARP"
	case len(s) >= 17 && isMAC(s[:17]):
		return s[:17]
	}
	return linkWordAt(s)
}

// linkWordAt returns the word that stands where tcpdump -e prints a MAC
// address, in text whose link-layer part was edited by hand (MACs replaced
// by words such as NGINX_INTERFACE): "WORD ethertype ..." (-i any) or
// "WORD > WORD2, ethertype ...". "" when s is not that.
func linkWordAt(s string) string {
	w, rest := field(s)
	if w == "" || !wordChars(w, "_-.:") {
		return ""
	}
	if strings.HasPrefix(rest, " ethertype ") {
		return w
	}
	if dst, ok := strings.CutPrefix(rest, " > "); ok {
		d, after := field(dst)
		if len(d) > 1 && strings.HasSuffix(d, ",") && wordChars(strings.TrimSuffix(d, ","), "_-.:") && strings.HasPrefix(after, " ethertype ") {
			return w
		}
	}
	return ""
}

func isMAC(s string) bool {
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
