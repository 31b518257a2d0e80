package rules

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// TLSCertificateRejected finds clients that refuse a server's certificate
// (Go's x509 errors): expired, not yet valid, signed by a CA they do not
// trust, or issued for other names.
var TLSCertificateRejected = &analyzer.Rule{
	Name:        "tls-certificate-rejected",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "component", "server", "client", "problem"},
	Run:         runTLSCertificateRejected,
	Symptoms:    []analyzer.SymptomRef{ControlPlaneUnhealthy.At(65), PodStreamsFail.At(70)},
	Proof: "the client's own x509 error, which names what it found wrong with the certificate: the validity " +
		"window against its clock (\"current time ... is before ...\"), the CA it tried (\"crypto/rsa: " +
		"verification error\" for a candidate of the same name), the names the certificate is valid for",
	Unproven: "an x509 error without those details leaves open which side is wrong (an expired certificate or a " +
		"clock ahead; a stale CA or a TLS-intercepting proxy); openssl s_client against the server and date -u on " +
		"both ends decide",
	Doc: `a client rejects a server's TLS certificate

Every component of a cluster speaks TLS to the apiserver, and the
apiserver to the kubelets and webhooks; Go's clients refuse a certificate
with an x509 error, and the connection fails before any request:

- "x509: certificate has expired or is not yet valid: current time T is
  after E": the certificate expired at E (kubeadm's certificates last a
  year; a kubelet's client certificate that did not rotate);
  "... is before S": the client's clock is behind the certificate's
  start, the clocks of the nodes are not in sync (a certificate issued by
  a node whose clock runs ahead is not valid yet elsewhere);
- "x509: certificate signed by unknown authority (possibly because of
  \"crypto/rsa: verification error\" while trying to verify candidate
  authority certificate \"kube-ca\")": the client trusts a CA of the same
  name with another key: the cluster's CA was made again (a cluster
  rebuilt over an earlier one) and the client kept the old one (a
  kubeconfig, /etc/kubernetes/ssl left behind); without the candidate, a
  stale CA, a kubeconfig of another cluster or a proxy that intercepts
  TLS;
- "x509: certificate is valid for A, B, not C" (or "cannot validate
  certificate for 10.0.0.5 because it doesn't contain any IP SANs"): the
  client reaches the server by a name or address the certificate does not
  carry (an apiserver behind a new load balancer address without
  certSANs; a kubelet's serving certificate reached by the node's address).

A server refuses its clients' certificates the same way ("Unable to
authenticate the request due to an error: x509: ...", etcd's "rejected
connection ... failed to verify client certificate"): then the client's
certificate is in question, not the server's (a kubelet whose client
certificate did not rotate, a component left out of a renewal). An error
kubectl relays ("Error from server: Get https://node:10250/...: x509:
..."; "error dialing backend") is the apiserver's, as a client of the
kubelet.

Evidence: the clients' log lines, per node, component, server and
problem.

Severity: a warning; likely where the error carries its details, unknown
where it does not.

Fix: renew the expired certificate (kubeadm certs renew all); sync the
nodes' clocks (chrony, systemd-timesyncd); give the client the cluster's
current CA (a fresh kubeconfig, the old /etc/kubernetes removed before a
rebuild); add the name to the certificate's SANs.`,
}

var (
	// tlsValidityRe is Go's expired or not yet valid certificate, with the
	// times Go 1.10 on adds: "current time 2020-10-06T10:00:00Z is
	// before 2020-10-06T10:05:00Z".
	tlsValidityRe = lazyre.New(`x509: certificate has expired or is not yet valid(?:: current time (\S+) is (before|after) (\S+?)[.,;"]?(?:\s|$))?`)
	// tlsAuthorityRe is Go's unknown authority, with the candidate CA of
	// the same name whose signature did not verify.
	tlsAuthorityRe = lazyre.New(`x509: certificate signed by unknown authority(?: \(possibly because of "([^"]+)" while trying to verify candidate authority certificate "([^"]+)"\))?`)
	// tlsNamesRe is Go's name mismatch: the names the certificate
	// carries and the one wanted; for an address, that it carries no IP
	// SANs; or no names at all.
	tlsNamesRe = lazyre.New(`x509: (?:certificate is valid for (.+?), not ([^\s,"\]]+)|cannot validate certificate for (\S+) because it doesn't contain any (IP SANs)|certificate is (not valid for any names), but wanted to match ([^\s,"\]]+))`)
	// tlsServerSideRe is a server's own refusal of its client's
	// certificate: the apiserver's authenticator, etcd's and Go's TLS
	// server.
	tlsServerSideRe = lazyre.New(`Unable to authenticate the request|failed to verify client'?s? certificate|rejected connection|client certificate`)
	// tlsRemoteRe is the client's address a server's line names.
	tlsRemoteRe = lazyre.New(`(?:remote-addr"?[:=]"?|from )(\[?[0-9A-Fa-f.:]+\]?):\d+`)
	// tlsRelayedRe is the apiserver's error as kubectl relays it: the
	// apiserver was the client (of a kubelet, a webhook, an aggregated
	// API).
	tlsRelayedRe = lazyre.New(`^(?:error: )?(?:Error from server(?: \([A-Za-z]+\))?: |.*\berror dialing backend: )`)
	// tlsServerRe is the server a client's request or dial went to.
	tlsServerRe = lazyre.New(`(?:Get|Post|Put|Patch|Delete|Head|dial tcp|connect to|to) "?https?://([^/"\s:]+(?::\d+)?)|dial tcp ([^\s:]+:\d+): `)
)

// tlsRejection is one component rejecting one server's certificate for
// one reason; or, serving, its clients' (clientCert).
type tlsRejection struct {
	node, comp, server string
	problem            string // expired, not-yet-valid, validity, unknown-authority, names
	detail             []string
	clientCert         bool   // the component is the server, refusing a client's certificate
	client             string // that client's address, when its line names it
	lineRun
}

// words is g's problem in words: "not yet valid", "unknown authority".
func (g *tlsRejection) words() string { return strings.ReplaceAll(g.problem, "-", " ") }

func runTLSCertificateRejected(p *analyzer.Pass) error {
	var groups []*tlsRejection
	byKey := map[string]*tlsRejection{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, "x509: ") && len(le.Fields) == 0 {
			continue
		}
		text := logText(le)
		problem, detail := tlsProblem(text)
		if problem == "" {
			continue
		}
		server := ""
		if m := tlsServerRe.FindStringSubmatch(text); m != nil {
			server = cmp.Or(m[1], m[2])
		}
		comp := logComponent(le, "a client")
		clientCert, client := tlsServerSideRe.MatchString(text), ""
		if clientCert {
			server = ""
			if m := tlsRemoteRe.FindStringSubmatch(le.Message); m != nil {
				client = strings.Trim(m[1], "[]")
			} else if a, err := netip.ParseAddrPort(cmp.Or(le.Fields["remote-addr"], le.Fields["remote_addr"])); err == nil {
				client = a.Addr().String() // etcd's JSON
			}
		} else if tlsRelayedRe.MatchString(le.Message) {
			comp = "kube-apiserver" // kubectl quotes the apiserver's own request
		}
		k := strings.Join([]string{le.Node, comp, problem, fmt.Sprint(clientCert), client}, "\x00")
		g := byKey[k]
		switch {
		case g == nil:
		case g.server == "" && server != "":
			g.server = server // a line that names it, after one that did not
		case server != "" && g.server != server:
			k += "\x00" + server // another server: a group of its own
			g = byKey[k]
		}
		if g == nil {
			g = &tlsRejection{node: le.Node, comp: comp, server: server, problem: problem, detail: detail,
				clientCert: clientCert, client: client}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(tlsFinding(g))
	}
	return nil
}

// tlsProblem reads the x509 error in text: which problem, and its
// details.
func tlsProblem(text string) (string, []string) {
	if m := tlsValidityRe.FindStringSubmatch(text); m != nil {
		switch m[2] {
		case "after":
			return "expired", []string{m[1], m[3]}
		case "before":
			return "not-yet-valid", []string{m[1], m[3]}
		}
		return "validity", nil
	}
	if m := tlsAuthorityRe.FindStringSubmatch(text); m != nil {
		if m[2] != "" {
			return "unknown-authority", []string{m[1], m[2]}
		}
		return "unknown-authority", nil
	}
	if m := tlsNamesRe.FindStringSubmatch(text); m != nil {
		switch {
		case m[4] != "":
			return "names", []string{"no IP SANs", m[3]}
		case m[5] != "":
			return "names", []string{"no names", m[6]}
		}
		return "names", []string{m[1], m[2]}
	}
	return "", nil
}

// tlsFinding judges and words one rejection.
func tlsFinding(g *tlsRejection) analyzer.Finding {
	if g.clientCert {
		return tlsClientCertFinding(g)
	}
	server := cmp.Or(g.server, "its server")
	if g.server == "" && g.comp == "kubectl" {
		server = "the apiserver" // "Unable to connect to the server: x509: ..."
	}
	who := g.comp + onNode(g.node)
	openssl := "echo | openssl s_client -connect SERVER 2>/dev/null | openssl x509 -noout -issuer -subject -dates -ext subjectAltName"
	if g.server != "" {
		openssl = strings.Replace(openssl, "SERVER", g.server, 1)
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "server", g.server, "problem", g.problem),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"server": g.server, "problem": g.problem, "component": g.comp, "lines": g.count},
		Evidence:  g.evidence("x509: "+g.words(), "the last such line"),
	}
	first := fmt.Sprintf("%s: %s rejects the certificate of %s", g.first.Pos, g.comp, server)
	switch g.problem {
	case "expired":
		f.Title = fmt.Sprintf("the certificate of %s expired at %s: %s refuses it", server, g.detail[1], g.comp)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: its validity ended at %s and the "+
			"client's clock reads %s.", who, server, times(g.count), g.detail[1], g.detail[0])
		f.Cause = "The certificate was not renewed (kubeadm's certificates last a year; a client certificate that " +
			"did not rotate)."
		f.Alternatives = []string{"the client's clock is ahead of the real time"}
		f.Fix = "Renew the certificate (kubeadm certs renew all, then restart the control plane's static Pods) or " +
			"rotate the client's; check the clock with date -u."
		f.Decide = "# the server's certificate dates against the real time\n" + openssl + "; date -u"
	case "not-yet-valid":
		f.Title = fmt.Sprintf("%s's clock is behind the start of the certificate of %s: clocks out of step", g.comp, server)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: it is valid from %s and the client's "+
			"clock reads %s. A certificate made moments ago by a host whose clock runs ahead is not valid yet on a "+
			"host whose clock is behind.", who, server, times(g.count), g.detail[1], g.detail[0])
		f.Cause = "The client's clock is behind the one the certificate was made by: the clocks of the client and " +
			"of the host that issued it are not in sync, or the client's clock (or its time zone) was set back since."
		f.Fix = "Sync every node's clock (chrony or systemd-timesyncd against the same servers), then retry."
		f.Decide = "# on each node, and against the certificate's start\ndate -u; chronyc tracking; " + openssl
	case "validity":
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("%s refuses the certificate of %s: expired, or not yet valid by its clock", g.comp, server)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents as expired or not yet valid, %s; the error "+
			"does not say which, nor the times.", who, server, times(g.count))
		f.Alternatives = []string{"the certificate expired (not renewed)",
			"the clocks of the nodes are not in sync (a certificate issued by a host whose clock runs ahead)"}
		f.Fix = "Compare the certificate's dates with the time on both ends: renew it if it expired, sync the clocks " +
			"if they differ."
		f.Decide = "# on the client and the server\ndate -u; " + openssl
	case "unknown-authority":
		f.Title = fmt.Sprintf("%s does not trust the CA that signed the certificate of %s", g.comp, server)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: it is not signed by a CA the client "+
			"trusts.", who, server, times(g.count))
		f.Decide = "# the issuer the server presents against the CA the client trusts\n" + openssl +
			"; openssl x509 -noout -subject -fingerprint -in CA_FILE"
		if len(g.detail) == 2 {
			f.Title = fmt.Sprintf("%s trusts an older %q CA than the one that signed the certificate of %s", g.comp,
				g.detail[1], server)
			f.Summary += fmt.Sprintf(" It holds a CA named %q, but its key does not verify the certificate "+
				"(%s): the CA was made again, and the client kept the earlier one.", g.detail[1], g.detail[0])
			f.Cause = "The cluster's CA was regenerated (a cluster rebuilt over an earlier one) and the client kept " +
				"the old CA or its old kubeconfig (certificates left in /etc/kubernetes)."
			f.Fix = "Give the client the current CA and credentials: remove the earlier cluster's /etc/kubernetes " +
				"before rebuilding, or fetch a fresh kubeconfig."
			break
		}
		f.Certainty = analyzer.Unknown
		f.Alternatives = []string{"the client holds another cluster's CA (a stale kubeconfig, a rebuilt cluster)",
			"a proxy between them intercepts TLS with its own certificate", "the server's certificate is self-signed"}
		f.Fix = "Give the client the CA that signed the server's certificate, or take the intercepting proxy out " +
			"of the path (NO_PROXY for the cluster's addresses)."
	case "names":
		carries := "it is valid for " + g.detail[0]
		switch g.detail[0] {
		case "no IP SANs":
			carries = "it carries no IP address among its names"
		case "no names":
			carries = "it carries no names at all"
		}
		f.Title = fmt.Sprintf("the certificate of %s does not name %s", server, g.detail[1])
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: %s, not %s, the name or address it "+
			"was reached by.", who, server, times(g.count), carries, g.detail[1])
		f.Cause = fmt.Sprintf("The server is reached as %s, which its certificate's subject alternative names do not "+
			"carry.", g.detail[1])
		f.Fix = fmt.Sprintf("Reissue the server's certificate with %s among its SANs, or reach it by a name it carries.",
			g.detail[1])
		switch _, port, _ := strings.Cut(g.server, ":"); {
		case port == "10250":
			f.Cause = fmt.Sprintf("The kubelet's serving certificate does not carry %s, the name or address the "+
				"apiserver reaches the node by (a self-signed serving certificate, or one issued for other names).",
				g.detail[1])
			f.Fix = "Give the kubelet a serving certificate with the node's names and addresses (serverTLSBootstrap: " +
				"true and its CSR approved, or --tls-cert-file), or have the apiserver reach kubelets by a name they carry " +
				"(--kubelet-preferred-address-types)."
		case port == "6443" || g.server == "" && g.comp == "kubectl":
			f.Cause = fmt.Sprintf("The apiserver is reached as %s, which its certificate does not carry (a new load "+
				"balancer address or DNS name, a node address not in certSANs).", g.detail[1])
			f.Fix = fmt.Sprintf("Add %s to the apiserver's certificate (kubeadm: apiServer.certSANs, then kubeadm init "+
				"phase certs apiserver with the old certificate moved away), or reach it by a name it carries.", g.detail[1])
		}
		f.Decide = openssl
	}
	f.Supports = []string{first + ": x509 " + g.words()}
	return f
}

// tlsClientCertFinding words a server refusing its clients' certificate:
// the client presents one expired, not yet valid by the server's clock,
// or signed by a CA the server does not trust.
func tlsClientCertFinding(g *tlsRejection) analyzer.Finding {
	client := "a client"
	if g.client != "" {
		client = "the client at " + g.client
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "client", g.client, "problem", g.problem),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"client": g.client, "problem": g.problem, "component": g.comp, "lines": g.count},
		Evidence:  g.evidence("x509: a client's certificate: "+g.words(), "the last such line"),
		Supports: []string{fmt.Sprintf("%s: %s refuses the certificate of %s: x509 %s", g.first.Pos, g.comp, client,
			g.words())},
		Decide: "# on the nodes: the kubelet's client certificate (and the kubeconfigs' certificates of the other clients)\n" +
			"openssl x509 -noout -issuer -dates -in /var/lib/kubelet/pki/kubelet-client-current.pem",
	}
	if strings.Contains(g.comp, "etcd") {
		f.Decide = "# on the client's node: the certificates etcd's clients present (the apiserver's, the peers')\n" +
			"openssl x509 -noout -issuer -dates -in /etc/kubernetes/pki/apiserver-etcd-client.crt; " +
			"openssl x509 -noout -issuer -dates -in /etc/kubernetes/pki/etcd/peer.crt"
	}
	who := g.comp + onNode(g.node)
	switch g.problem {
	case "expired":
		f.Title = fmt.Sprintf("%s refuses %s: its client certificate expired at %s", g.comp, client, g.detail[1])
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: it expired at %s. The server's own "+
			"certificate is not in question; a client's is.", who, client, times(g.count), g.detail[1])
		f.Cause = "A client still presents a certificate that was not renewed: a kubelet whose client certificate " +
			"did not rotate (kubeadm certs renew does not renew it), a kubeconfig's embedded certificate, a " +
			"component's certificate left out of a renewal (for etcd, the apiserver's etcd client certificate or a " +
			"peer's), or one renewed on disk by a process not restarted since."
		f.Alternatives = []string{"the server's clock is ahead of the real time"}
		f.Fix = "Find the client (its address, the audit log) and renew its certificate: for a kubelet, " +
			"rotateCertificates and its CSR approved, or a new client certificate; then restart it."
	case "not-yet-valid":
		f.Title = fmt.Sprintf("%s refuses %s: its client certificate starts after the server's clock", g.comp, client)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: it is valid from %s and the server's "+
			"clock reads %s.", who, client, times(g.count), g.detail[1], g.detail[0])
		f.Cause = "The server's clock is behind the clock the client's certificate was issued by: the nodes' " +
			"clocks are not in sync."
		f.Fix = "Sync every node's clock (chrony or systemd-timesyncd against the same servers)."
		f.Decide = "# on each node\ndate -u; chronyc tracking"
	case "unknown-authority":
		f.Title = fmt.Sprintf("%s refuses %s: its client certificate is signed by a CA the server does not trust",
			g.comp, client)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s: it is not signed by the CA the "+
			"server trusts for clients.", who, client, times(g.count))
		f.Cause = "A client presents a certificate of another CA: a kubelet or kubeconfig of an earlier cluster " +
			"(a cluster rebuilt over it, certificates left in /etc/kubernetes), or a CA the server's --client-ca-file " +
			"does not hold."
		f.Alternatives = []string{"the server's client CA file is not the cluster's CA"}
		f.Fix = "Give the client credentials issued by the cluster's CA (rejoin the node, a fresh kubeconfig), " +
			"or the server the CA that issued them."
	default:
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("%s refuses the certificate of %s", g.comp, client)
		f.Summary = fmt.Sprintf("%s refuses the certificate %s presents, %s, as expired or not yet valid; the "+
			"error does not say which.", who, client, times(g.count))
		f.Alternatives = []string{"the client's certificate expired", "the nodes' clocks are not in sync"}
		f.Fix = "Renew the client's certificate if it expired, sync the clocks if they differ."
	}
	return f
}
