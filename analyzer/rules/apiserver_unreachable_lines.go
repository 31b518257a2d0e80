package rules

import (
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// The log lines of apiserver-unreachable: a component's failed calls to
// the apiserver, as client-go and older clients write them.

// apiCallRe finds a call to an HTTPS URL whose dial failed: client-go's
// `Get "https://ADDR:PORT/path": dial tcp ADDR:PORT: i/o timeout` (quotes
// escaped or not), and the errors that come after a connect. Older clients
// write the URL without quotes, call the insecure port over http, and older
// Go says "getsockopt: connection refused".
var apiCallRe = lazyre.New(`https?://([^/"\\\s]+)(/[^"\\\s]*)?\\?"?: (?:dial tcp (\S+): (i/o timeout|(?:connect|getsockopt): (?:connection refused|no route to host|network is unreachable|connection timed out))|read tcp \S+->\S+: read: (connection reset by peer)|net/http: (TLS handshake timeout)|(EOF))`)

// bareDialRe is a dial error alone, as a ticket quotes it.
var bareDialRe = lazyre.New(`^dial tcp (\S+): (?:(?:connect|getsockopt): (connection refused|no route to host|network is unreachable|connection timed out)|(i/o timeout))$`)

// apiPathRe recognizes the apiserver's paths.
var apiPathRe = lazyre.New(`^/(?:api|apis|version|healthz|livez|readyz|openapi)(?:[/?]|$)`)

// listedKindRe names the resource a client-go informer lists.
var listedKindRe = lazyre.New(`(?i)failed to (?:list|watch) \*(?:v\d\w*|api|core|discovery)\.(\w+)`)

// apiFailure is one log line reporting a failed call to the apiserver.
type apiFailure struct {
	le      *model.LogEvent
	addr    string // host:port as the client dialed it
	failure string // i/o timeout, connection refused ...
	kind    string // the resource listed, "" when none
}

// apiFailureOf reads a log event; ok is false when it reports no failed
// call to the apiserver.
func apiFailureOf(le *model.LogEvent) (apiFailure, bool) {
	if strings.HasPrefix(le.Message, "Trace[") {
		return apiFailure{}, false // the steps of a trace repeat the error logged on its own line
	}
	texts := []string{le.Message}
	for _, k := range []string{"err", "error"} {
		if v := le.Fields[k]; v != "" {
			texts = append(texts, v)
		}
	}
	for _, t := range texts {
		m := apiCallRe.FindStringSubmatch(t)
		if m == nil || !apiPathRe.MatchString(m[2]) {
			continue
		}
		f := apiFailure{le: le, addr: m[1]}
		switch {
		case m[4] != "":
			f.failure = strings.TrimPrefix(strings.TrimPrefix(m[4], "connect: "), "getsockopt: ")
			if m[3] != "" {
				f.addr = m[3]
			}
		case m[5] != "":
			f.failure = m[5]
		case m[6] != "":
			f.failure = m[6]
		default:
			f.failure = "connection closed (EOF)"
		}
		if k := listedKindRe.FindStringSubmatch(le.Message); k != nil {
			f.kind = k[1]
		}
		return f, true
	}
	if m := bareDialRe.FindStringSubmatch(le.Message); m != nil { // quoted without its call: the kubernetes Service's?
		if ap, err := netip.ParseAddrPort(m[1]); err == nil && ap.Port() == 443 && firstOfServiceRange(ap.Addr()) {
			return apiFailure{le: le, addr: m[1], failure: m[2] + m[3]}, true
		}
	}
	return apiFailure{}, false
}

// isAPIServerLog reports whether a log event is kube-apiserver's own: its
// failed calls go to aggregated APIs and webhooks (metrics-server's
// /apis/metrics.k8s.io), not to itself.
func isAPIServerLog(le *model.LogEvent) bool {
	return strings.Contains(strings.ToLower(le.Source+" "+le.Pos.File), "kube-apiserver")
}
