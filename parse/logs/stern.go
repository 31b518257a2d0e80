package logs

import "strings"

// unwrapStern reads a line of stern (or kubetail) output, "<pod>
// <container> <line>", as those tools print each container's line after
// the names of its Pod and container: "kube-proxy-7xq4d kube-proxy
// E1120 07:08:50.482693 1 proxier.go:647] ...". Only a line of a known
// shape after the two names (klog, JSON, logfmt) is taken for one, so that
// two words of prose are not read as names.
func (lr *logReader) unwrapStern(line string) (wrapped, bool) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 || !k8sNameRe.MatchString(f[0]) || !k8sNameRe.MatchString(f[1]) || !strings.Contains(f[0], "-") {
		return wrapped{}, false
	}
	switch _, kind, _ := lr.parseLine(f[2]); kind {
	case "klog", "json", "logfmt":
		return wrapped{kind: "stern", inner: f[2], container: &ContainerLog{Pod: f[0], Container: f[1]}}, true
	}
	return wrapped{}, false
}
