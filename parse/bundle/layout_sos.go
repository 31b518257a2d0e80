package bundle

import (
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
)

// sosNameRE takes the host out of sosreport-<host>[-<case id>]-<date>-<random>.
var sosNameRE = lazyre.New(`^sosreport-(.+?)(?:-\d{5,})?-\d{4}-\d{2}-\d{2}-[a-z0-9]+$`)

// sosOldNameRE takes the host out of sosreport-<host>[.<case>]-<YYYYMMDDhhmmss>.
var sosOldNameRE = lazyre.New(`^sosreport-(.+?)(?:\.\d+)?-\d{14}$`)

func sosHost(ix *index, d, treeName string) string {
	if h := firstLine(ix.files[join(d, "hostname")]); h != "" {
		return h
	}
	n := rootName(d, treeName)
	if m := sosNameRE.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	if m := sosOldNameRE.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	return strings.TrimPrefix(n, "sosreport-")
}

// kubeconfigRE removes the kubeconfig argument sos puts in kubectl command
// names (kubectl --kubeconfig /etc/kubernetes/admin.conf get pods ...).
var kubeconfigRE = lazyre.New(`\s--kubeconfig[ =]\S+`)

// SOSCommand turns a sosreport sos_commands file name back into the
// command it ran. sos replaces spaces (and other characters outside
// [\w.-/]) with "_" and "/" with ".", so the result is what ran up to
// those characters; a --kubeconfig argument is dropped. For example
// "kubectl_--kubeconfig_.etc.kubernetes.admin.conf_get_pods_-o_json"
// is "kubectl get pods -o json".
func SOSCommand(file string) string {
	c := strings.Join(strings.FieldsFunc(file, func(r rune) bool { return r == '_' }), " ")
	c = kubeconfigRE.ReplaceAllString(c, "")
	return c
}

func placeSOS(host, rel string) placement {
	pl := placement{node: host}
	parts := strings.Split(rel, "/")
	switch {
	case parts[0] == sosCommandsDir && len(parts) >= 3:
		pl.command = SOSCommand(parts[len(parts)-1])
		if i := indexOf(parts, "namespaces"); i >= 0 && i+2 < len(parts) && parts[1] == "networking" {
			pl.node = NetnsNode(host, parts[i+1])
		} else if strings.HasPrefix(pl.command, "ip netns exec ") {
			if f := strings.Fields(pl.command); len(f) > 3 {
				pl.node = NetnsNode(host, f[3])
			}
		}
	case parts[0] == "proc" || parts[0] == "etc" || parts[0] == "sys":
		pl.command = "cat /" + rel
	}
	return pl
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}
