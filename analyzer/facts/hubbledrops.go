package facts

import (
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// HubbleDropPair is hubble observe's policy drops (or policy-verdict
// denials) of one pair of endpoints, as hubble names them ("ns/pod",
// "10.0.0.1:53"); the client's own port is left out, as it changes with
// each flow.
type HubbleDropPair struct {
	Client, Server string
	Lines          []*model.LogEvent
}

// HubblePolicyDrops groups hubble observe's policy drops per pair of
// endpoints, in the order of their first line.
var HubblePolicyDrops = &analyzer.Fact[[]HubbleDropPair]{
	Name: "hubble-policy-drops",
	Doc:  "hubble observe's flows DROPPED as \"Policy denied\" or DENIED by a policy verdict, per pair of endpoints",
	Compute: func(fs *analyzer.FactSet) []HubbleDropPair {
		s := fs.Snapshot()
		var out []HubbleDropPair
		at := map[[2]string]int{}
		for i := range s.Logs {
			le := &s.Logs[i]
			v, ev := le.Fields["verdict"], strings.ToLower(le.Fields["event"])
			if le.Source != "hubble" || !(v == "DROPPED" && strings.Contains(ev, "policy denied") ||
				v == "DENIED" && strings.HasPrefix(ev, "policy-verdict")) {
				continue
			}
			src := le.Fields["src"]
			if port := HubblePort(src); port != "" && le.Fields["direction"] != "<-" {
				src = strings.TrimSuffix(src, ":"+port)
			}
			k := [2]string{src, le.Fields["dst"]}
			j, ok := at[k]
			if !ok {
				j = len(out)
				at[k] = j
				out = append(out, HubbleDropPair{Client: k[0], Server: k[1]})
			}
			out[j].Lines = append(out[j].Lines, le)
		}
		return out
	},
}

// HubblePort is the port of an endpoint as hubble names it ("ns/pod:53",
// "10.0.0.1:53"), or "".
func HubblePort(name string) string {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || strings.Count(name, ":") > 1 && !strings.Contains(name, "]") {
		return ""
	}
	return name[i+1:]
}
