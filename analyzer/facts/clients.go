package facts

import (
	"fmt"
	"net/netip"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// Detour is one request a client transcript shows unanswered at one
// address and answered at another: the same DNS question asked of two
// servers, the same port tried at two addresses. When the first address
// is a Service's and the second one of its endpoints, the Service's path
// (kube-proxy's DNAT, the forwarding of the translated packets) is what
// fails, not the endpoint.
type Detour struct {
	// Failed is the attempt that went unanswered (timed out, interrupted
	// with nothing printed, no route to host); Answered the one that was
	// answered (a DNS answer of any status, a connection).
	Failed, Answered *model.ClientResult
	// Via is the address Failed was made to; To the one Answered was.
	Via, To netip.Addr
	// Service is the Service whose ClusterIP Via is, "" when the bundle
	// has no Service objects (Via and To are then both private addresses).
	Service string
	// ServicePos is where that Service is listed.
	ServicePos model.Pos
}

// Detours finds, in the client transcripts, requests unanswered at one
// address and answered at another.
var Detours = &analyzer.Fact[[]Detour]{
	Name: "client-detours",
	Doc: "requests a client transcript shows unanswered at one address (a Service's ClusterIP when the bundle " +
		"lists Services, else a private address) and answered at another: the same DNS question, the same port",
	Compute: func(fs *analyzer.FactSet) []Detour { return detours(fs.Snapshot()) },
}

func detours(s *model.Snapshot) []Detour {
	type svcRef struct {
		name string
		pos  model.Pos
	}
	clusterIPs := map[netip.Addr]svcRef{}
	for i := range s.Kube.Services {
		svc := &s.Kube.Services[i]
		for _, ip := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
			if a, err := netip.ParseAddr(ip); err == nil {
				clusterIPs[a] = svcRef{svc.Namespace + "/" + svc.Name, svc.Source.Pos}
			}
		}
	}
	var out []Detour
	seen := map[netip.Addr]bool{}
	for i := range s.Client {
		f := &s.Client[i]
		if !unanswered(f.Outcome) {
			continue
		}
		for _, via := range f.Dests() {
			if seen[via] {
				continue
			}
			ref, isSvc := clusterIPs[via]
			if !isSvc && (len(clusterIPs) > 0 || !via.IsPrivate()) {
				continue
			}
			for j := range s.Client {
				a := &s.Client[j]
				if !sameRequest(f, a) {
					continue
				}
				for _, to := range a.Dests() {
					if to == via || !to.IsPrivate() || seen[via] {
						continue
					}
					seen[via] = true
					out = append(out, Detour{Failed: f, Answered: a, Via: via, To: to, Service: ref.name, ServicePos: ref.pos})
				}
			}
		}
	}
	return out
}

// unanswered says whether an outcome is a request nothing answered: not a
// refusal, which something sent.
func unanswered(o model.ClientOutcome) bool {
	return o == model.ClientTimeout || o == model.ClientNoAnswer || o == model.ClientNoRoute
}

// sameRequest says whether a was answered for the request f made: the
// same DNS name asked with the same tool kind, or the same port tried.
func sameRequest(f, a *model.ClientResult) bool {
	if a.Outcome != model.ClientAnswered && a.Outcome != model.ClientConnected {
		return false
	}
	if f.Name != "" || a.Name != "" {
		return f.Name == a.Name && dnsTool(f.Tool) == dnsTool(a.Tool)
	}
	return f.Addr.Port() != 0 && f.Addr.Port() == a.Addr.Port() && !dnsTool(f.Tool) && !dnsTool(a.Tool)
}

func dnsTool(tool string) bool { return tool == "dig" || tool == "nslookup" }

// Describe says what the transcript shows, with the positions: "dig
// @10.50.0.2 kubernetes-dashboard (dig.txt:3) got no answer at 10.50.0.2,
// the Service kube-system/kube-dns's address, while the same request to
// 10.244.1.83 was answered (dig.txt:10)".
func (d Detour) Describe() string {
	what := d.Failed.Command
	if what == "" {
		what = d.Failed.Tool + " " + d.Failed.Target
	}
	svc := ""
	if d.Service != "" {
		svc = ", the Service " + d.Service + "'s address"
	}
	return fmt.Sprintf("%s (%s) got no answer at %s%s, while the same request to %s was answered (%s)",
		what, d.Failed.Pos, d.Via, svc, d.To, d.Answered.Pos)
}

// Evidence cites the two attempts and the Service.
func (d Detour) Evidence() []analyzer.Evidence {
	ev := []analyzer.Evidence{{Pos: d.Failed.Pos, Note: d.Failed.Message}, {Pos: d.Answered.Pos, Note: d.Answered.Message}}
	if d.Service != "" {
		ev = append(ev, analyzer.Evidence{Pos: d.ServicePos, Note: "Service " + d.Service})
	}
	return ev
}
