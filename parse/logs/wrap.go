package logs

import (
	"strings"

	"github.com/netmortem/netmortem/parse/internal/text"
)

// wrappedKernelMessages are kernel messages a paste often hard-wraps in
// the middle; a line of no log shape that completes one of them continues
// the syslog or dmesg line before it.
var wrappedKernelMessages = []string{
	"nf_conntrack: table full, dropping packet",
	"nf_conntrack: expectation table full",
	"neighbor table overflow!",
	"Possible SYN flooding on port",
	"out of memory -- consider tuning tcp_mem",
}

// maxWrapJoin bounds the message a hard-wrapped line is joined to.
const maxWrapJoin = 4096

// kernelWrap reports whether line, which has no log shape of its own, is
// the rest of the entry before it, of shape kind and message msg, that a
// paste hard-wrapped: the entry is a syslog or dmesg line that ends
// mid-sentence (with ",") or that, with line, makes a known kernel message
// ("nf_conntrack: table full," then "dropping packet").
func kernelWrap(kind, msg, line string) bool {
	if kind != "syslog" && kind != "dmesg" {
		return false
	}
	t := strings.TrimSpace(line)
	if t == "" || isContinuation(line) || len(msg) > maxWrapJoin || text.IsPromptOrMarker(line) || logNoise(t) {
		return false
	}
	m := strings.TrimRight(msg, " ")
	if strings.HasSuffix(m, ",") {
		return true
	}
	joined := m + " " + t
	for _, k := range wrappedKernelMessages {
		if strings.Contains(joined, k) && !strings.Contains(m, k) {
			return true
		}
	}
	return false
}
