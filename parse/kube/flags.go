package kube

import (
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ComponentFlags reads the command-line flags of cluster components as
// people paste them: one flag per line ("--service-node-port-range=20000-40000",
// also "- --flag=value" list items and "--flag value"), optionally after a
// line naming the binary, with the trailing backslashes of a systemd
// ExecStart or a shell script; or whole command lines as `ps auxww` and
// `ps -ef` print them ("root 880 ... /usr/local/bin/kube-apiserver
// --advertise-address=10.0.0.1 ..."). Each command line, or each run of flag
// lines, becomes one model.Component.
//
// The component is named by its binary (kube-apiserver, kubelet,
// kube-proxy, kube-controller-manager, kube-scheduler, etcd, or hyperkube's
// first argument); when only flags are given, by the flags only one
// component has (--service-node-port-range belongs to kube-apiserver), and
// "unknown" otherwise. Lines that are neither flags nor a component command
// are reported as errors and skipped; shell prompts and blank lines end a
// run of flags.
func ComponentFlags(r io.Reader, name string) ([]model.Component, error) {
	return format.ReadAll(r, name, readComponentFlags)
}

// componentBinaries are the component names netmortem knows, as their
// binaries are called.
var componentBinaries = map[string]bool{
	"kube-apiserver":           true,
	"kube-controller-manager":  true,
	"kube-scheduler":           true,
	"kube-proxy":               true,
	"kubelet":                  true,
	"etcd":                     true,
	"cloud-controller-manager": true,
}

// flagOwners maps flags that only one component has to that component.
var flagOwners = map[string]string{
	"service-node-port-range":               "kube-apiserver",
	"service-cluster-ip-range":              "kube-apiserver",
	"etcd-servers":                          "kube-apiserver",
	"advertise-address":                     "kube-apiserver",
	"enable-admission-plugins":              "kube-apiserver",
	"authorization-mode":                    "kube-apiserver",
	"kubelet-client-certificate":            "kube-apiserver",
	"service-account-issuer":                "kube-apiserver",
	"allocate-node-cidrs":                   "kube-controller-manager",
	"node-cidr-mask-size":                   "kube-controller-manager",
	"service-account-private-key-file":      "kube-controller-manager",
	"controllers":                           "kube-controller-manager",
	"proxy-mode":                            "kube-proxy",
	"ipvs-scheduler":                        "kube-proxy",
	"masquerade-all":                        "kube-proxy",
	"nodeport-addresses":                    "kube-proxy",
	"pod-manifest-path":                     "kubelet",
	"cluster-dns":                           "kubelet",
	"container-runtime-endpoint":            "kubelet",
	"listen-client-urls":                    "etcd",
	"initial-cluster":                       "etcd",
	"initial-advertise-peer-urls":           "etcd",
	"listen-peer-urls":                      "etcd",
	"advertise-client-urls":                 "etcd",
	"initial-cluster-state":                 "etcd",
	"auto-compaction-retention":             "etcd",
	"quota-backend-bytes":                   "etcd",
	"heartbeat-interval":                    "etcd",
	"leader-elect-resource-lock":            "kube-controller-manager",
	"terminated-pod-gc-threshold":           "kube-controller-manager",
	"bind-address-hard-fail":                "kube-proxy",
	"conntrack-max-per-core":                "kube-proxy",
	"cgroup-driver":                         "kubelet",
	"service-account-signing-key-file":      "kube-apiserver",
	"requestheader-allowed-names":           "kube-apiserver",
	"enable-bootstrap-token-auth":           "kube-apiserver",
	"kubelet-preferred-address-types":       "kube-apiserver",
	"insecure-port":                         "kube-apiserver",
	"endpoint-reconciler-type":              "kube-apiserver",
	"max-requests-inflight":                 "kube-apiserver",
	"data-dir":                              "etcd",
	"snapshot-count":                        "etcd",
	"peer-client-cert-auth":                 "etcd",
	"client-cert-auth":                      "etcd",
	"trusted-ca-file":                       "etcd",
	"peer-trusted-ca-file":                  "etcd",
	"cert-file":                             "etcd",
	"key-file":                              "etcd",
	"peer-cert-file":                        "etcd",
	"peer-key-file":                         "etcd",
	"root-ca-file":                          "kube-controller-manager",
	"cluster-signing-cert-file":             "kube-controller-manager",
	"use-service-account-credentials":       "kube-controller-manager",
	"storage-backend":                       "kube-apiserver",
	"runtime-config":                        "kube-apiserver",
	"audit-log-path":                        "kube-apiserver",
	"oidc-issuer-url":                       "kube-apiserver",
	"proxy-client-cert-file":                "kube-apiserver",
	"kubelet-certificate-authority":         "kube-apiserver",
	"kubelet-https":                         "kube-apiserver",
	"node-monitor-grace-period":             "kube-controller-manager",
	"pod-eviction-timeout":                  "kube-controller-manager",
	"horizontal-pod-autoscaler-sync-period": "kube-controller-manager",
	"iptables-sync-period":                  "kube-proxy",
	"ipvs-sync-period":                      "kube-proxy",
	"ipvs-min-sync-period":                  "kube-proxy",
	"iptables-min-sync-period":              "kube-proxy",
	"max-pods":                              "kubelet",
	"node-ip":                               "kubelet",
	"register-node":                         "kubelet",
	"eviction-hard":                         "kubelet",
	"fail-swap-on":                          "kubelet",
	"network-plugin":                        "kubelet",
	"pod-infra-container-image":             "kubelet",
	"resolv-conf":                           "kubelet",
	"rotate-certificates":                   "kubelet",
}

// flagLineRe matches one flag on a line of its own: "--a=b", "--a b",
// "- --a=b" (a YAML list item), with an optional trailing backslash.
var flagLineRe = lazyre.New(`^\s*(?:-\s+)?--([A-Za-z0-9][A-Za-z0-9._-]*)(?:(=|\s+)(.*?))?\s*\\?\s*$`)

// flagLine splits a flag line into its name and value.
func flagLine(line string) (name, value string, ok bool) {
	m := flagLineRe.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	value = m[3]
	if m[2] != "=" && strings.HasPrefix(value, "-") {
		return "", "", false // "--a --b" is two flags: not a flag line
	}
	return m[1], unquoteFlag(value), true
}

func unquoteFlag(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// commandComponent finds a component binary among the words of line and
// returns its name and the index of the word after it.
func commandComponent(words []string) (string, int) {
	for i, w := range words {
		base := path.Base(strings.TrimSuffix(w, "\\"))
		if componentBinaries[base] {
			return base, i + 1
		}
		if base == "hyperkube" && i+1 < len(words) {
			next := strings.TrimPrefix(words[i+1], "kube-")
			if componentBinaries["kube-"+next] {
				return "kube-" + next, i + 2
			}
			if componentBinaries[next] {
				return next, i + 2
			}
		}
	}
	return "", -1
}

// inferComponent names a component from its flags.
func inferComponent(args []model.Arg) string {
	for _, a := range args {
		if owner := flagOwners[a.Name]; owner != "" {
			return owner
		}
	}
	return "unknown"
}

func readComponentFlags(r io.Reader, src *format.File, errs *model.ErrorList) []model.Component {
	name := src.Name
	var out []model.Component
	var cur *model.Component
	flush := func() {
		if cur == nil {
			return
		}
		if cur.Name == "" {
			cur.Name = inferComponent(cur.Args)
		}
		out = append(out, *cur)
		cur = nil
	}
	l := text.NewLines(r, name, errs)
	for l.Next() {
		line := l.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			flush()
			continue
		}
		if _, _, ok := text.Prompt(line); ok {
			flush()
			continue
		}
		if fname, value, ok := flagLine(line); ok {
			if cur == nil {
				cur = &model.Component{Node: src.Node, Pos: l.Pos()}
			}
			cur.Args = append(cur.Args, model.Arg{Name: fname, Value: value, Pos: l.Pos()})
			continue
		}
		words := strings.Fields(strings.TrimSuffix(trimmed, "\\"))
		if comp, next := commandComponent(words); comp != "" {
			flush()
			cur = &model.Component{Node: src.Node, Name: comp, Pos: l.Pos()}
			col := 1
			for _, w := range words[next:] {
				if !strings.HasPrefix(w, "--") {
					continue
				}
				col = strings.Index(line, w) + 1
				n, v, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				cur.Args = append(cur.Args, model.Arg{Name: n, Value: unquoteFlag(v), Pos: model.Pos{File: name, Line: l.Line(), Col: col}})
			}
			if !strings.HasSuffix(trimmed, "\\") {
				flush()
			}
			continue
		}
		l.Errorf("%w: expected a command-line flag (--name=value) or a component command line", format.ErrSyntax)
	}
	flush()
	return out
}

// sniffComponentFlags scores text made of flag lines or component command
// lines.
func sniffComponentFlags(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	lines := text.HeadLines(head, 200)
	flags, commands, total := 0, 0, 0
	for _, line := range lines {
		if _, _, ok := text.Prompt(line); ok {
			continue
		}
		total++
		if _, _, ok := flagLine(line); ok {
			flags++
			continue
		}
		words := strings.Fields(line)
		if comp, next := commandComponent(words); comp != "" && next < len(words) && strings.HasPrefix(words[next], "--") {
			commands++
		}
	}
	if total == 0 {
		return 0
	}
	switch {
	case flags+commands == total:
		return 60
	case commands > 0:
		return text.RatioScore(flags+commands, total, 40)
	}
	return 0
}

// ComponentFlagsFormat reads the command-line flags of cluster components.
var ComponentFlagsFormat = &format.Format{
	Name: "component-flags",
	Kind: model.KindComponents,
	Command: "component flags pasted one per line (--service-node-port-range=..., - --flag manifest " +
		"items, \\ continuations), ps auxww lines of kube-apiserver, kubelet, kube-proxy, etcd " +
		"..., hyperkube",
	Doc:   "the component is named by its binary, or inferred from flags only it has",
	Sniff: sniffComponentFlags,
	Parse: format.Records(readComponentFlags, func(s *model.Snapshot, out []model.Component) { s.Components = append(s.Components, out...) }, ""),
}
