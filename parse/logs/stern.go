package logs

import "strings"

// unwrapStern reads a line of stern (or kubetail) output, "<pod>
// <container> <line>", as those tools print each container's line after
// the names of its Pod and container: "kube-proxy-7xq4d kube-proxy
// E1120 07:08:50.482693 1 proxier.go:647] ...". Only a line of a known
// shape after the two names (klog, JSON, logfmt, Felix) is taken for one, so that
// two words of prose are not read as names; a line of no shape after the
// same two names continues the entry before it.
func (lr *logReader) unwrapStern(line string) (wrapped, bool) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 || !k8sNameRe.MatchString(f[0]) || !k8sNameRe.MatchString(f[1]) || !strings.Contains(f[0], "-") {
		return wrapped{}, false
	}
	c := &ContainerLog{Pod: f[0], Container: f[1]}
	switch _, kind, _ := lr.parseLine(f[2]); kind {
	case "klog", "json", "logfmt", "felix":
		return wrapped{kind: "stern", inner: f[2], container: c}, true
	}
	if n := len(lr.events); n > 0 && lr.events[n-1].Pod == c.Pod && lr.events[n-1].Container == c.Container {
		// The next line of the same container's message (iptables'
		// error spans two): it continues the entry.
		return wrapped{kind: "stern", inner: " " + f[2], container: c}, true
	}
	return wrapped{}, false
}
