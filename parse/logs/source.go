package logs

import (
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// knownComponents are the programs whose logs are recognized by a file or
// command name, longest first where one is a prefix of another.
var knownComponents = []string{
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet",
	"etcd", "coredns", "ingress-nginx-controller", "metallb-controller", "metallb-speaker",
	"kube-vip", "calico-node", "cilium-agent", "cilium-operator", "cilium", "flanneld", "flannel",
	"containerd", "dockerd", "nginx", "ipamd", "aws-node",
}

// knownComponent names the component a log file is named after:
// "kube-proxy.log", "kubelet.log.1", "etcd-m1.log" ... "" when none.
func knownComponent(base string) string {
	stem := strings.ToLower(base)
	for _, c := range knownComponents {
		if strings.HasPrefix(stem, c) {
			return c
		}
	}
	return ""
}

// sourceFromCommand names the component whose log a command prints:
// journalctl -u UNIT, kubectl logs POD [-c CONTAINER], or a command
// reading a log file (tail, cat, less, grep ...).
func sourceFromCommand(cmd string) string {
	if cmd == "" {
		return ""
	}
	if k, ok := text.ParseKubectl(cmd); ok {
		if k.Verb != "logs" {
			return ""
		}
		if c := kubectlContainer(cmd); c != "" {
			return c
		}
		if len(k.Args) > 0 {
			pod := k.Args[0]
			if i := strings.LastIndexByte(pod, '/'); i >= 0 {
				pod = pod[i+1:]
			}
			if c := knownComponent(pod); c != "" {
				return c
			}
			return pod
		}
		return ""
	}
	f := strings.Fields(strings.Split(cmd, "|")[0])
	if len(f) == 0 {
		return ""
	}
	if text.Program(cmd) == "journalctl" {
		for i, w := range f {
			unit := ""
			switch {
			case (w == "-u" || w == "--unit") && i+1 < len(f):
				unit = f[i+1]
			case strings.HasPrefix(w, "--unit="):
				unit = strings.TrimPrefix(w, "--unit=")
			case strings.HasPrefix(w, "-u") && len(w) > 2:
				unit = w[2:]
			}
			if unit != "" {
				return strings.TrimSuffix(unit, ".service")
			}
		}
		return ""
	}
	for i := len(f) - 1; i > 0; i-- {
		if strings.Contains(f[i], "/") || strings.Contains(f[i], ".log") {
			return knownComponent(path.Base(f[i]))
		}
	}
	return ""
}

// fileCommand reports whether t is a command reading a log file pasted
// without a prompt ("cat /var/log/pods/.../0.log", "sudo tail -n 20
// kube-proxy.log").
func fileCommand(t string) bool {
	if !strings.Contains(t, "cat") && !strings.Contains(t, "tail") && !strings.Contains(t, "head") &&
		!strings.Contains(t, "less") && !strings.Contains(t, "more") && !strings.Contains(t, "tac") &&
		!strings.Contains(t, "grep") {
		return false // none of the programs below, told without splitting the line
	}
	f := strings.Fields(strings.Split(t, "|")[0])
	if len(f) < 2 {
		return false
	}
	switch text.Program(t) {
	case "cat", "tail", "head", "less", "more", "zcat", "tac", "grep", "zgrep":
	default:
		return false
	}
	last := f[len(f)-1]
	return strings.ContainsAny(last, "/*") || strings.Contains(last, ".log")
}

// sectionHeader reads the header head and tail print before each of
// several files ("==> /var/log/kube-proxy.log <==") and minikube logs
// before each component's log ("==> kubelet <==", "==> coredns [a1b2c3] <==").
func sectionHeader(t string) (string, bool) {
	rest, ok := strings.CutPrefix(t, "==> ")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, " <==")
	if !ok || strings.TrimSpace(name) == "" {
		return "", false
	}
	return strings.TrimSpace(name), true
}

// section starts the lines of the file or component a header names: their
// source, and their container when the file is a container's log.
func (lr *logReader) section(name string) {
	lr.container = ContainerLog{}
	if strings.ContainsAny(name, "/.") {
		lr.source = knownComponent(path.Base(name))
		if c, ok := ContainerLogPath(name); ok {
			lr.container, lr.source = c, c.Container
		}
		return
	}
	word := strings.ToLower(strings.Fields(name)[0])
	if c := knownComponent(word); c != "" {
		word = c
	}
	lr.source = word
}

// newLines returns the line reader of r, kept to tell the command pasted
// above a log without a prompt (shellCommand).
func (lr *logReader) newLines(r io.Reader) *text.Lines {
	lr.lines = text.NewLines(r, lr.name, lr.errs)
	return lr.lines
}

// shellCommand recognizes a pasted command line: one after a prompt
// (text.ShellCommand), or the first line's without one
// (text.Lines.PastedCommand).
func (lr *logReader) shellCommand(line string) (host, cmd string, ok bool) {
	if host, cmd, ok := text.ShellCommand(line); ok {
		return host, cmd, true
	}
	if lr.lines != nil {
		if cmd, ok := lr.lines.PastedCommand(); ok {
			return "", cmd, true
		}
	}
	return "", "", false
}

// isContinuation reports whether line continues the entry before it: a
// wrapped message, a stack trace, the steps of a klog trace
// ("Trace[1667975177]: ... END").
func isContinuation(line string) bool {
	return line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, "Trace[")
}

// goesOnUnprefixed reports whether the entries of a log shape go on on the
// lines of no shape below them: Felix's and weave's tracebacks and wrapped
// messages, a Go log message with line breaks.
func goesOnUnprefixed(kind string) bool {
	return kind == "felix" || kind == "weave" || kind == "golog"
}

// klogContinues reports whether a line of no log shape continues the
// entry before it, of shape kind and message msg: a klog message that
// opened a parenthesis it has not closed, as an error quoting a
// command's output does ("Failed to execute iptables-restore: exit
// status 2 (iptables-restore v1.4.21: ..."), whose lines follow as the
// command printed them, up to the ")" klog closes it with, and no more
// than maxParenLines; or ingress-nginx's "NGINX configuration diff:",
// whose unified diff of nginx.conf follows, line by line, up to a line of
// no diff shape. A prompt or a node marker is never one, nor minikube's
// "* " line, a file's command, a line around logs or a section header.
func klogContinues(kind, msg, line string) bool {
	if kind != "klog" || text.IsPromptOrMarker(line) || strings.HasPrefix(line, "* ") {
		return false
	}
	if first, _, _ := strings.Cut(msg, "\n"); strings.HasSuffix(first, "configuration diff:") {
		// ingress-nginx's "NGINX configuration diff:", a unified diff
		// of nginx.conf: the reader keeps its first maxEntryBytes.
		return diffLine(line) && !logNoise(strings.TrimSpace(line))
	}
	if strings.Count(msg, "(") <= strings.Count(msg, ")") || strings.Count(msg, "\n") >= maxParenLines {
		return false
	}
	// Not a line of its own kind that the reader reads: a file's command
	// (cat x.log), journalctl's and people's lines around logs, a section
	// header.
	t := strings.TrimSpace(line)
	if _, ok := sectionHeader(t); ok {
		return false
	}
	return !fileCommand(t) && !logNoise(t)
}

// maxParenLines bounds the lines klogContinues joins to one entry.
const maxParenLines = 64

// maxEntryBytes bounds the message of an entry the reader joins lines
// to: past it, the lines are taken in without their text.
const maxEntryBytes = 1 << 20

// diffLine reports whether line can be a line of a unified diff past its
// first: a header, a hunk's, a line removed or added, or diff's "\ No
// newline at end of file". (Lines kept start with a space, which every
// entry takes as its continuation.)
func diffLine(line string) bool {
	switch line[0] {
	case '+', '-', '\\':
		return true
	}
	return strings.HasPrefix(line, "@@ ")
}

// portForwardRe matches what kubectl port-forward prints of its work,
// "Forwarding from 127.0.0.1:8080 -> 3000" and "Handling connection for
// 8080", between the klog lines of its errors.
var portForwardRe = lazyre.New(`^(?:Forwarding from \S+ -> \d+|Handling connection for \d+)$`)

// clientCommand reports whether t is the command line of a client whose
// output a ticket pastes with logs, without its prompt: "curl
// localhost:8080", "kubectl port-forward web 8080:80" (a program's own
// message names it with a colon: "curl: (7) ...").
func clientCommand(t string) bool {
	f := strings.Fields(t)
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	if len(f) < 2 {
		return false
	}
	switch f[0] {
	case "kubectl", "oc", "curl", "wget", "helm":
		return true
	}
	return false
}

// logNoise are lines journalctl and people add around logs.
func logNoise(t string) bool {
	switch {
	case strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --"): // -- Logs begin at ... --, -- Boot 1a2b... --
		return true
	case t == "..." || t == "…" || strings.HasPrefix(t, "...") || t == "[...]" || t == "*":
		return true
	case strings.HasPrefix(t, "░░"): // journalctl -x catalog explanations
		return true
	case strings.HasPrefix(t, "Defaulted container ") && strings.Contains(t, " out of: "):
		return true // kubectl logs naming the container it chose, on stderr
	case portForwardRe.MatchString(t):
		return true // kubectl port-forward's own lines, between its klog errors
	case clientCommand(t):
		return true // a client's command line pasted among the output, without its prompt
	}
	if !strings.Contains(t, " ") {
		_, ok := ContainerLogPath(t) // ls /var/log/containers
		return ok
	}
	return false
}
