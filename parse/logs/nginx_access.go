package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// NginxAccessFormat reads nginx's access log.
var NginxAccessFormat = logFormat("nginx-access", format.Format{
	Name: "nginx-access",
	Command: "nginx access log (combined format, the nginx image's extra \"$http_x_forwarded_for\", " +
		"ingress-nginx's upstreaminfo)",
	Doc: "the request line is the message; the rest in Fields named after nginx's variables " +
		"(`remote_addr`, `status`, `upstream_addr`, `upstream_status` ...)",
})

var (
	nginxAccessRe = lazyre.New(`^(\S+) \S+ (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\d+|-)(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?(.*)$`)
	// ingress-nginx's upstreaminfo after the user agent.
	ingressNginxRe = lazyre.New(`^ (\d+) ([\d.]+) \[([^\]]*)\] \[([^\]]*)\] (\S+) (\S+) (\S+) (\S+) (\S+)\s*$`)
	nginxXFFRe     = lazyre.New(`^ "((?:[^"\\]|\\.)*)"`)
)

func parseNginxAccess(line string) (model.LogEvent, bool) {
	m := nginxAccessRe.FindStringSubmatch(line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("02/Jan/2006:15:04:05 -0700", m[3])
	if err != nil {
		return model.LogEvent{}, false
	}
	f := map[string]string{"remote_addr": m[1], "remote_user": m[2], "request": m[4], "status": m[5], "body_bytes_sent": m[6]}
	if rf := strings.Fields(m[4]); len(rf) == 3 {
		f["method"], f["path"], f["protocol"] = rf[0], rf[1], rf[2]
	}
	if m[7] != "" || m[8] != "" {
		f["http_referer"], f["http_user_agent"] = m[7], m[8]
	}
	rest := m[9]
	if x := nginxXFFRe.FindStringSubmatch(rest); x != nil {
		f["http_x_forwarded_for"] = x[1]
		rest = rest[len(x[0]):]
	}
	if u := ingressNginxRe.FindStringSubmatch(rest); u != nil {
		for i, k := range []string{"request_length", "request_time", "proxy_upstream_name", "proxy_alternative_upstream_name",
			"upstream_addr", "upstream_response_length", "upstream_response_time", "upstream_status", "req_id"} {
			f[k] = u[i+1]
		}
	} else if r := strings.TrimSpace(rest); r != "" {
		f["rest"] = r
	}
	return model.LogEvent{Source: "nginx", Time: ts.UTC(), Message: m[4], Fields: f}, true
}
