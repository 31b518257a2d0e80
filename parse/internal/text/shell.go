package text

import (
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// Command lines pasted with kubectl tables and logs, in more prompt styles
// than Prompt knows.

var (
	// userHostDirRe matches "user@host dir $ cmd" (Gentoo, Container-Optimized OS).
	userHostDirRe = lazyre.New(`^[A-Za-z0-9._-]+@([A-Za-z0-9._-]+)\s+\S+\s+[$#%]\s+(\S.*)$`)
	// shortPromptRe matches a prompt without spaces: "~$ cmd", "bash-4.2# cmd", "PS> cmd".
	shortPromptRe = lazyre.New(`^[^\s$#%>]{0,40}[$#%>]\s+(\S.*)$`)
	// bareKubectlRe matches a kubectl command pasted without a prompt.
	bareKubectlRe = lazyre.New(`^(?:sudo\s+)?(?:kubectl|oc|k3s\s+kubectl|microk8s\s+kubectl|microk8s\.kubectl)\s`)
)

// ShellCommand recognizes a pasted command line and returns the host its
// prompt names ("" when none) and the command. It knows the prompts of
// Prompt, "user@host dir $ cmd", short prompts such as "~$ cmd", and
// kubectl command lines pasted without a prompt.
func ShellCommand(line string) (host, cmd string, ok bool) {
	if host, cmd, ok := Prompt(line); ok {
		return host, cmd, true
	}
	if strings.ContainsAny(line, "$#%>") { // a prompt's sign, which both patterns need
		if m := userHostDirRe.FindStringSubmatch(line); m != nil {
			return m[1], strings.TrimSpace(m[2]), true
		}
		if m := shortPromptRe.FindStringSubmatch(line); m != nil {
			return "", strings.TrimSpace(m[1]), true
		}
	}
	t := strings.TrimSpace(line)
	if bareKubectlRe.MatchString(t) {
		return "", t, true
	}
	return "", "", false
}

// kubectlArgs returns the arguments after the kubectl (or oc) program of
// the first stage of a pipeline, and the later stages; ok is false when the
// command does not run kubectl.
func kubectlArgs(cmd string) (args []string, pipes []string, ok bool) {
	stages := strings.Split(cmd, "|")
	f := strings.Fields(stages[0])
	for i, w := range f {
		switch path.Base(w) {
		case "kubectl", "oc", "microk8s.kubectl":
			return f[i+1:], stages[1:], true
		}
	}
	return nil, nil, false
}

// kubectlValueFlags are the kubectl flags that take a value in the next
// word when written without "=".
var kubectlValueFlags = map[string]bool{
	"-n": true, "--namespace": true, "--context": true, "--cluster": true, "--user": true,
	"--kubeconfig": true, "-l": true, "--selector": true, "--field-selector": true,
	"-o": true, "--output": true, "-L": true, "--label-columns": true, "--sort-by": true,
	"-s": true, "--server": true, "--token": true, "--as": true, "--as-group": true,
	"--request-timeout": true, "--chunk-size": true, "--template": true, "-c": true,
	"--container": true, "--since": true, "--since-time": true, "--tail": true,
	"--certificate-authority": true, "--client-certificate": true, "--client-key": true,
	"-v": true, "--v": true, "--profile": true, "-f": true, "--filename": true,
}

// Kubectl is a parsed kubectl command line.
type Kubectl struct {
	Verb      string   // get, logs, describe ...
	Args      []string // positional arguments after the verb
	Namespace string   // the -n value
	AllNS     bool     // -A
	Output    string   // the -o value
	Pipes     []string // the later stages of the pipeline
}

// ParseKubectl reads a kubectl command line; ok is false when cmd does not
// run kubectl.
func ParseKubectl(cmd string) (Kubectl, bool) {
	args, pipes, ok := kubectlArgs(cmd)
	if !ok {
		return Kubectl{}, false
	}
	k := Kubectl{Pipes: pipes}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if k.Verb == "" {
				k.Verb = a
			} else {
				k.Args = append(k.Args, a)
			}
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && len(name) > 2 && name[1] != '-' {
			// -nkube-system, -owide
			switch name[:2] {
			case "-n", "-o":
				name, val, hasVal = name[:2], name[2:], true
			}
		}
		if name == "-f" && (k.Verb == "logs" || k.Verb == "log") {
			continue // kubectl logs -f: --follow, not a file
		}
		if !hasVal && kubectlValueFlags[name] && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		switch name {
		case "-n", "--namespace":
			k.Namespace = strings.Trim(val, `"'`)
		case "-A", "--all-namespaces":
			k.AllNS = val == "" || val == "true"
		case "-o", "--output":
			k.Output = val
		}
	}
	return k, true
}

// ClusterClient tells whether cmd runs a client of the cluster's API
// (kubectl, helm ...), whose output comes from the cluster, not from the
// host in the prompt (often a laptop). calicoctl's node commands (node
// status, node diags) read the host's own BIRD and files: the host's.
func ClusterClient(cmd string) bool {
	switch Program(cmd) {
	case "kubectl", "oc", "helm", "k9s", "kubectl.exe", "k", "crane", "velero", "cilium":
		return true
	case "calicoctl":
		f := strings.Fields(cmd[strings.Index(cmd, "calicoctl"):])
		return len(f) < 2 || f[1] != "node"
	}
	return false
}

// pastedPrograms are the programs whose output is pasted under the bare
// command line that printed it (iptables and ip6tables in all their forms
// too): a line running one of them is a command, not output.
var pastedPrograms = map[string]bool{
	"nft": true, "ipvsadm": true, "conntrack": true, "ss": true, "netstat": true, "nstat": true,
	"sysctl": true, "ip": true, "bridge": true, "arp": true, "cat": true, "dmesg": true,
	"journalctl": true, "lsmod": true, "tcpdump": true, "tshark": true, "crictl": true, "docker": true,
}

// versionWordRe matches the version after a program's name in its own
// messages: "iptables v1.8.7 (nf_tables): ...", "conntrack v1.4.6
// (conntrack-tools): 12 flow entries have been shown.".
var versionWordRe = lazyre.New(`^v\d`)

// BareCommand recognizes a command line pasted without a prompt, as tickets
// carry the command above its output ("iptables-save | grep KUBE", "sudo
// ipvsadm -Ln", "cat /proc/sys/net/ipv4/ip_forward"), and returns the
// command. The program must be one whose output netmortem reads, named as a
// word of its own: "iptables: No chain/target/match by that name." and
// "iptables v1.8.7 (nf_tables): ..." are the program's messages, not
// commands.
func BareCommand(line string) (string, bool) {
	t := strings.TrimSpace(line)
	prog := Program(t)
	if !pastedPrograms[prog] && !strings.HasPrefix(prog, "iptables") && !strings.HasPrefix(prog, "ip6tables") {
		return "", false
	}
	f := strings.Fields(t)
	for i, w := range f {
		if path.Base(w) != prog {
			continue
		}
		if i+1 < len(f) && versionWordRe.MatchString(f[i+1]) {
			return "", false
		}
		return t, true
	}
	return "", false
}

// HeadCommand returns the command that line i of a file's head runs: one
// after a prompt, or, on the first line (i == 0), one pasted without a
// prompt (BareCommand).
func HeadCommand(i int, line string) (string, bool) {
	if _, cmd, ok := Prompt(line); ok {
		return cmd, true
	}
	if i == 0 {
		return BareCommand(line)
	}
	return "", false
}
