package collect_test

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
)

// TestCatalog holds the catalog's invariants: unique names, one-line
// commands, relative files, and commands that only read.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	writes := []string{"sysctl -w", "sysctl -p", "modprobe", "insmod", "iptables-restore", "nft add", "nft delete", "nft flush",
		"ip link set", "ip addr add", "ip route add", "conntrack -F", "conntrack -D", "conntrack -I", "rm ", "kill", "secret",
		"kubectl delete", "kubectl apply", "kubectl create", "kubectl patch", "kubectl edit", "kubectl label", "kubectl annotate"}
	iptablesWrites := []string{" -A ", " -I ", " -D ", " -F ", " -X ", " -P ", " -N ", " -R ", " -Z "}
	for _, c := range collect.Commands {
		if c.Name == "" || seen[c.Name] {
			t.Errorf("command %q: empty or repeated name", c.Name)
		}
		seen[c.Name] = true
		if c.Shell == "" || strings.Contains(c.Shell, "\n") {
			t.Errorf("%s: Shell %q: want one line", c.Name, c.Shell)
		}
		if len(c.Kinds) == 0 || c.Scope != collect.ScopeNode && c.Scope != collect.ScopeCluster {
			t.Errorf("%s: kinds %v, scope %q", c.Name, c.Kinds, c.Scope)
		}
		if c.File == "" || path.IsAbs(c.File) || strings.Contains(c.File, "..") || c.File == collect.ManifestFile {
			t.Errorf("%s: file %q: want a relative path inside the node's directory", c.Name, c.File)
		}
		if len(c.Tools) == 0 && len(c.Paths) == 0 {
			t.Errorf("%s: no tools and no paths: the collector could not tell when to skip it", c.Name)
		}
		if strings.HasPrefix(c.Shell, "iptables") || strings.HasPrefix(c.Shell, "ipvsadm") {
			for _, w := range iptablesWrites {
				if strings.Contains(c.Shell+" ", w) {
					t.Errorf("%s: %q: the collector must only read", c.Name, w)
				}
			}
		}
		for _, w := range writes {
			if strings.Contains(c.Shell+" ", w) || strings.Contains(c.Script+" ", w) {
				t.Errorf("%s: %q: the collector must only read", c.Name, w)
			}
		}
		if got, ok := collect.Lookup(c.Name); !ok || got.Shell != c.Shell {
			t.Errorf("Lookup(%q) = %+v, %v", c.Name, got, ok)
		}
	}
	// Every kind a node or kubectl can give has a command.
	for _, k := range []model.Kind{model.KindCapture, model.KindSysctl, model.KindIPVS, model.KindNetfilter, model.KindSockets,
		model.KindKube, model.KindComponents, model.KindLogs, model.KindNeighbors, model.KindAddrs, model.KindLinks,
		model.KindRoutes, model.KindConntrack, model.KindContainers, model.KindCounters} {
		cs := collect.ForKind(k)
		if len(cs) == 0 {
			t.Errorf("no command gives %s", k)
		}
		for _, c := range cs {
			if !slices.Contains(c.Kinds, k) {
				t.Errorf("ForKind(%s) returned %s, of kinds %v", k, c.Name, c.Kinds)
			}
		}
	}
	if _, ok := collect.Lookup("no-such-command"); ok {
		t.Error("Lookup found a command that does not exist")
	}
}

// TestSymptomsCoverEveryRule holds that docs/collect.md lists every rule
// under some symptom, and that the symptoms come in their order.
func TestSymptomsCoverEveryRule(t *testing.T) {
	listed := map[string]bool{}
	syms := collect.Symptoms(rules.All())
	for _, s := range syms {
		for _, r := range s.Rules {
			listed[r.Name] = true
		}
	}
	for _, r := range rules.All() {
		if !listed[r.Name] {
			t.Errorf("rule %s is under no symptom", r.Name)
		}
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	want := []string{"Pods stuck in ContainerCreating", "probes time out", "connections time out", "Service unreachable from some nodes",
		"intermittent 502 through a LoadBalancer", "a LoadBalancer Service's EXTERNAL-IP stays pending", "DNS timeouts", "kubectl port-forward, exec or logs fail",
		"the control plane looks unhealthy"}
	if !slices.Equal(names, want) {
		t.Errorf("symptoms %q, want %q", names, want)
	}
}

// TestSymptomsOrder checks that the symptoms come by their rank and the
// rules under one by theirs, then in the order of the rule list.
func TestSymptomsOrder(t *testing.T) {
	late := &analyzer.Symptom{Name: "late", Doc: "d", Rank: 2}
	early := &analyzer.Symptom{Name: "early", Doc: "d", Rank: 1}
	a := &analyzer.Rule{Name: "a", Symptoms: []analyzer.SymptomRef{late.At(5)}}
	b := &analyzer.Rule{Name: "b", Symptoms: []analyzer.SymptomRef{late.At(1), early.At(3)}}
	c := &analyzer.Rule{Name: "c", Symptoms: []analyzer.SymptomRef{late.At(5)}}
	var got []string
	for _, s := range collect.Symptoms([]*analyzer.Rule{a, nil, b, c}) {
		got = append(got, s.Name+":")
		for _, r := range s.Rules {
			got = append(got, r.Name)
		}
	}
	if want := []string{"early:", "b", "late:", "b", "a", "c"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWriteDoc checks that every symptom's commands give every kind its
// rules need.
func TestWriteDoc(t *testing.T) {
	var b bytes.Buffer
	if err := collect.WriteDoc(&b, rules.All()); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	sections := strings.Split(doc, "\n## ")[1:]
	syms := collect.Symptoms(rules.All())
	if len(sections) != len(syms)+1 {
		t.Fatalf("%d sections, want one per symptom and the command list", len(sections))
	}
	for i, s := range syms {
		sec := sections[i]
		if !strings.HasPrefix(sec, s.Name+"\n") {
			t.Errorf("section %d is %q, want %q", i, strings.SplitN(sec, "\n", 2)[0], s.Name)
		}
		for _, r := range s.Rules {
			if !strings.Contains(sec, "[`"+r.Name+"`]") {
				t.Errorf("%s: rule %s not listed", s.Name, r.Name)
			}
			for _, k := range r.Needs {
				for _, c := range collect.ForKind(k) {
					if !strings.Contains(sec, "`"+strings.ReplaceAll(c.Shell, "|", `\|`)+"`") {
						t.Errorf("%s: %s needs %s, but %s is not listed", s.Name, r.Name, k, c.Name)
					}
				}
			}
		}
	}
}

// TestScriptSyntax checks the script of several option sets with sh -n,
// dash -n and shellcheck, where they are installed.
func TestScriptSyntax(t *testing.T) {
	shells := [][]string{{"sh", "-n"}, {"dash", "-n"}, {"busybox", "sh", "-n"}, {"shellcheck", "-s", "sh", "-S", "warning"}}
	ran := 0
	for _, o := range []collect.Options{
		collect.DefaultOptions(),
		func() collect.Options {
			o := collect.DefaultOptions()
			o.Kubectl = true
			o.Filter = `tcp port 80 and host 10.0.0.1 or 'x'`
			return o
		}(),
		func() collect.Options {
			o := collect.DefaultOptions()
			o.CaptureSeconds = 0
			o.Kubectl = true
			return o
		}(),
	} {
		var b bytes.Buffer
		if err := collect.WriteScript(&b, o); err != nil {
			t.Fatal(err)
		}
		script := b.String()
		if !strings.HasPrefix(script, "#!/bin/sh\n") {
			t.Errorf("script starts %q", script[:20])
		}
		if got := strings.Contains(script, "nm_run 'capture'"); got != (o.CaptureSeconds > 0) {
			t.Errorf("capture %d s: capture in script = %v", o.CaptureSeconds, got)
		}
		if got := strings.Contains(script, "nm_run 'kubectl-objects'"); got != o.Kubectl {
			t.Errorf("kubectl %v: kubectl in script = %v", o.Kubectl, got)
		}
		for _, sh := range shells {
			if _, err := exec.LookPath(sh[0]); err != nil {
				continue
			}
			cmd := exec.Command(sh[0], append(sh[1:], "-")...)
			if sh[0] == "shellcheck" {
				cmd = exec.Command(sh[0], append(sh[1:], "-")...)
			}
			cmd.Stdin = strings.NewReader(script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s on the script (%+v): %v\n%s", strings.Join(sh, " "), o, err, out)
			}
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("no shell to check the script with")
	}
}

func TestOptionsCheck(t *testing.T) {
	if err := collect.DefaultOptions().Check(); err != nil {
		t.Fatalf("default options: %v", err)
	}
	for _, bad := range []func(*collect.Options){
		func(o *collect.Options) { o.CaptureSeconds = -1 },
		func(o *collect.Options) { o.CaptureMB = 0 },
		func(o *collect.Options) { o.ConntrackMax = 0 },
		func(o *collect.Options) { o.Filter = "tcp\nrm -rf /" },
		func(o *collect.Options) { o.Timeout = 0 },
	} {
		o := collect.DefaultOptions()
		bad(&o)
		if err := o.Check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if err := collect.WriteScript(&bytes.Buffer{}, o); err == nil {
			t.Errorf("WriteScript(%+v): no error", o)
		}
	}
}

func TestReadManifest(t *testing.T) {
	good := "# comment\nformat\tnetmortem-collect\nscript-version\t1\nnode\tn1\nstarted\t2026-01-01T00:00:00Z\n" +
		"tool\tkernel\t6.1.0\nran\tss-tanpi\t0\tn1/ss-tanpi.txt\tss -tanpi\nran\tnft-ruleset\t0\t-\tnft list ruleset\n" +
		"ran\tcontainer-logs\t0\tn1/var/log/containers/\ttail -n 20000 /var/log/containers/kube-proxy-*.log\n" +
		"skipped\tcrictl\tcrictl not found\nstderr\tss-tanpi\tsome\ttext\nended\t2026-01-01T00:01:00Z\n"
	m, err := collect.ReadManifest("m.txt", strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if m.Node != "n1" || len(m.Ran) != 3 || m.Ran[1].File != "" || len(m.Skipped) != 1 || len(m.Tools) != 1 || m.Ended == "" {
		t.Errorf("read %+v", m)
	}
	if c, ok := m.Command("n1/ss-tanpi.txt"); !ok || c != "ss -tanpi" {
		t.Errorf("Command(ss-tanpi.txt) = %q, %v", c, ok)
	}
	if c, ok := m.Command("n1/var/log/containers/kube-proxy-x_kube-system_kube-proxy-0123.log"); !ok || !strings.HasPrefix(c, "tail") {
		t.Errorf("Command(a container log) = %q, %v", c, ok)
	}
	if _, ok := m.Command("n1/other.txt"); ok {
		t.Error("Command of a file no command wrote: found")
	}
	for in, want := range map[string]string{
		"node\tn1\n":                                      "m.txt:1: expected a line",
		"format\tother\n":                                 "m.txt:1: expected format netmortem-collect",
		"format\tnetmortem-collect\nran\tx\n":             "m.txt:2: ran line: expected name, status, file and command",
		"format\tnetmortem-collect\nran\tx\tok\tf\tcmd\n": "m.txt:2: ran line: expected an exit status",
		"format\tnetmortem-collect\nbogus\n":              "m.txt:2: expected a manifest line",
	} {
		_, err := collect.ReadManifest("m.txt", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadManifest(%q) = %v, want %q", in, err, want)
		}
	}
}

// TestCommandToolsListed checks that each program a one-line command runs
// (the first word of each part of its pipeline) is among its Tools, so
// that the collector skips the command with a note where one is missing
// instead of running a pipeline that fails half way.
func TestCommandToolsListed(t *testing.T) {
	for _, c := range collect.Commands {
		body := c.Script
		if body == "" {
			body = c.Shell
		}
		if strings.Contains(body, "\n") {
			continue
		}
		for _, part := range pipelineParts(body) {
			words := strings.Fields(part)
			if len(words) == 0 {
				continue
			}
			prog := words[0]
			if strings.ContainsAny(prog, "=$'\"") || prog == "nm_redact" || prog == "printf" {
				continue
			}
			if !slices.Contains(c.Tools, prog) {
				t.Errorf("%s: runs %s (in %q), not among its tools %v", c.Name, prog, body, c.Tools)
			}
		}
	}
}

// pipelineParts splits a one-line shell command at the |, ; and && that
// are outside single quotes.
func pipelineParts(body string) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '|' || c == ';':
			parts = append(parts, body[start:i])
			start = i + 1
		case c == '&' && i+1 < len(body) && body[i+1] == '&':
			parts = append(parts, body[start:i])
			i++
			start = i + 1
		}
	}
	return append(parts, body[start:])
}

// TestAskForSysctl holds that a report lacking sysctls asks for the
// network sysctls only: the bridge's, which sysctl -a lists too when
// br_netfilter is loaded, hold none of the values the rules need
// (ip_local_port_range, rp_filter).
func TestAskForSysctl(t *testing.T) {
	var got []string
	for _, c := range collect.AskFor(model.KindSysctl) {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, []string{"sysctl-net"}) {
		t.Errorf("AskFor(sysctl) = %v, want [sysctl-net]", got)
	}
}

// TestManifestLinesWhole runs the script's nm_line from four processes at
// once, as the background capture and the other commands do: every line
// of the manifest must come out whole, none cut into by another's.
func TestManifestLinesWhole(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	var script bytes.Buffer
	if err := collect.WriteScript(&script, collect.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	s := script.String()
	start := strings.Index(s, "\nnm_line() {\n")
	end := strings.Index(s[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatalf("the script has no nm_line function:\n%s", s)
	}
	def := s[start+1 : start+1+end+3]
	manifest := filepath.Join(t.TempDir(), "manifest")
	prog := "nm_tab=$(printf '\\t')\n" + def + `nm_manifest=$1
for p in 1 2 3 4; do
	( i=0; while [ $i -lt 150 ]; do nm_line stderr "cmd-$p" "line $i of process $p, long enough to take a while to write"; i=$((i+1)); done ) &
done
wait
`
	if out, err := exec.Command("sh", "-c", prog, "sh", manifest).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 600 {
		t.Errorf("%d lines, want 600", len(lines))
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != "stderr" || !strings.HasPrefix(f[1], "cmd-") || !strings.HasSuffix(f[2], "long enough to take a while to write") {
			t.Errorf("line cut into: %q", l)
			break
		}
	}
}
