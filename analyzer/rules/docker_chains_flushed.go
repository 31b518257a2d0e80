package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// DockerChainsFlushed finds Docker's iptables rules failing because the
// chains dockerd made (DOCKER, DOCKER-ISOLATION-STAGE-1, DOCKER-USER...)
// are gone.
var DockerChainsFlushed = &analyzer.Rule{
	Name:        "docker-chains-flushed",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindNetfilter},
	SubjectKeys: []string{"node", "chain"},
	Run:         runDockerChainsFlushed,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(290), ConnectionsTimeOut.At(95)},
	Proof: "Docker's (or firewalld's) own line quoting the iptables command that failed for want of a DOCKER chain " +
		"(\"iptables: No chain/target/match by that name.\", \"Chain 'DOCKER' does not exist\"): dockerd made the " +
		"chain when it started, so something removed it since",
	Unproven: "what removed it (firewalld started or reloaded after dockerd, an iptables service restart, a firewall " +
		"script), or whether it lives in the other iptables backend; the chain's listing in both backends and the " +
		"services' start times decide",
	Doc: `dockerd's iptables chains are gone: published ports fail

dockerd makes its own iptables chains when it starts (DOCKER in the nat and
filter tables, DOCKER-ISOLATION-STAGE-1 and -2, DOCKER-USER) and adds a
container's port mappings and isolation rules to them as containers start.
Anything that flushes the tables afterwards takes the chains with it:
firewalld started or reloaded after dockerd (firewall-cmd --reload), the
iptables service restarted (it restores its saved rules), a firewall script
or cron job that runs iptables -F and -X. From then on every container
started with a published port fails ("driver failed programming external
connectivity on endpoint ...: iptables failed: iptables --wait -t nat -A
DOCKER ...: iptables: No chain/target/match by that name."), and
containers already running lose their mappings and their outbound NAT.
kind, k3d and minikube nodes, and a node's own Docker, fail the same way.

Evidence: the lines of docker, dockerd or firewalld quoting the failed
iptables command and the chain it wanted; the nat and filter tables when
the bundle holds them (the chain absent). dockerd's own start flushes,
deletes and checks its chains before it makes them again, and firewalld
logs each of those that finds none: such lines (-F, -X, -D, -C) are not
read.

Severity: a warning of likely cause: the chain was made at dockerd's start,
so it was removed since; which program removed it, and whether the chain
is in the other iptables backend (legacy against nf_tables), the listing
decides.

Fix: restart dockerd (systemctl restart docker), which makes its chains
again, and keep the firewall from flushing them: start firewalld before
Docker (Docker 20.10 and later then puts its interfaces in its own
firewalld zone), and do not reload or restore iptables under a running
dockerd.`,
}

// dockerChainRe finds, in the failed iptables command a line quotes, the
// Docker chain it wanted: as the chain it added to (-A DOCKER), as its
// target (-j DOCKER), or as the error names it.
//
// dockerd's own start flushes, deletes and checks its chains before it
// makes them again (-F, -X, -D, -C), and firewalld logs each of those that
// finds none: they are not read, only a rule added to a chain, or jumping
// to one, that is missing.
var dockerChainRe = lazyre.New(`(?:-[AIN] |--append |--insert |--new-chain |-j |--jump |Chain '|target ` + "`" + `)(DOCKER(?:-[A-Z0-9-]+)?)\b`)

// dockerChainCleanupRe is dockerd's cleanup of its chains at its start:
// a flush, a delete or a check of a chain.
var dockerChainCleanupRe = lazyre.New(`ip6?tables (?:-w\d* |--wait )*(?:-t \w+ |--table \w+ )?(?:-[FXDC]|--flush|--delete|--check|--delete-chain) `)

// dockerChainMissing is one chain of one node that Docker's rules did not
// find.
type dockerChainMissing struct {
	node, chain string
	sources     []string
	lineRun
}

func runDockerChainsFlushed(p *analyzer.Pass) error {
	var groups []*dockerChainMissing
	byKey := map[string]*dockerChainMissing{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, "DOCKER") {
			continue
		}
		text := logText(le)
		if !strings.Contains(text, "No chain/target/match by that name") && !strings.Contains(text, "does not exist") &&
			!strings.Contains(text, "Couldn't load target") {
			continue
		}
		if !iptablesFailedRe.MatchString(text) {
			continue
		}
		if dockerChainCleanupRe.MatchString(text) {
			continue // dockerd's cleanup at its start, of chains it makes again next
		}
		m := dockerChainRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		k := le.Node + "\x00" + m[1]
		g := byKey[k]
		if g == nil {
			g = &dockerChainMissing{node: le.Node, chain: m[1]}
			byKey[k] = g
			groups = append(groups, g)
		}
		if src := subjectComponent(le.Source, le.Pos.File); src != "" && !slices.Contains(g.sources, src) {
			g.sources = append(g.sources, src)
		}
		g.add(le)
	}
	for _, g := range groups {
		listed, rs := dockerChainListed(p.Snap, g)
		if listed {
			continue // the chain is there now: made again, or the lines are old
		}
		f := dockerChainFinding(g)
		if rs != nil {
			f.Supports = append(f.Supports, fmt.Sprintf("%s: the node's iptables listing has no %s chain", rs.Pos, g.chain))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: rs.Pos, Note: "no " + g.chain + " chain"})
		}
		p.Report(f)
	}
	return nil
}

// iptablesFailedRe is an iptables command that failed for want of a
// chain or target, as Docker and firewalld quote it.
var iptablesFailedRe = lazyre.New("(?:\\biptables failed: |\\bCOMMAND_FAILED: ')(?:/(?:usr/)?s?bin/)?ip6?tables\\b.*?" +
	"(?:No chain/target/match by that name|Chain '[^']+' does not exist|Couldn't load target `[^']+')")

// dockerChainListed reports whether the bundle's iptables listings of
// g's node show g's chain (listed), and the first listing of the node
// when there is one.
func dockerChainListed(s *model.Snapshot, g *dockerChainMissing) (listed bool, first *model.Ruleset) {
	for _, rs := range s.Netfilter {
		if rs.Node != g.node {
			continue
		}
		if first == nil {
			first = rs
		}
		for _, t := range rs.Tables {
			if t.Chain(g.chain) != nil {
				return true, rs
			}
		}
	}
	return false, first
}

// dockerChainFinding words one chain missing.
func dockerChainFinding(g *dockerChainMissing) analyzer.Finding {
	by := strings.Join(g.sources, " and ")
	if by == "" {
		by = "Docker"
	}
	return analyzer.Finding{
		Subject:   subject("node", g.node, "chain", g.chain),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("Docker's %s chain is gone%s: something flushed the rules dockerd made", g.chain, onNode(g.node)),
		Summary: fmt.Sprintf("%s quotes iptables failing for want of the %s chain, %s: dockerd made it when it "+
			"started, so it was removed since, and containers' published ports and their NAT no longer work.", by,
			g.chain, times(g.count)),
		Cause: "The iptables rules were flushed under a running dockerd: firewalld started or reloaded after it, the " +
			"iptables service restarted, or a firewall script ran.",
		Alternatives: []string{"the chain is in the other iptables backend (dockerd on iptables-legacy, the failing " +
			"command on nf_tables, or the other way round)"},
		Fix: "Restart dockerd (systemctl restart docker) to make its chains again; start firewalld before Docker and " +
			"do not reload or restore iptables under a running dockerd.",
		Decide: fmt.Sprintf("# on the node: the chain in either backend, and which service started last\n"+
			"iptables -t nat -S %s; iptables-legacy -t nat -S %s; systemctl show -p ActiveEnterTimestamp firewalld docker",
			g.chain, g.chain),
		Supports: []string{fmt.Sprintf("%s: iptables fails for want of the %s chain", g.first.Pos, g.chain)},
		Facts:    map[string]any{"chain": g.chain, "lines": g.count},
		Evidence: g.evidence("iptables: no "+g.chain+" chain", "the last such line"),
	}
}
