package logs

import (
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// Lines pasted without the prefix their log gives them: a netfilter LOG
// line cut from the kernel's log, containerd's logfmt without its time
// and level.

// nfLogRe matches a netfilter LOG (or TRACE) line without the kernel
// log's prefix: the rule's log prefix, if any, then IN= OUT= ... SRC=.
var nfLogRe = lazyre.New(`^(?:[\w.:-]+(?: [\w.:-]+){0,3}:? ?)?IN=\S* OUT=\S* .*\bSRC=\S+ DST=\S+`)

// parseBareNFLog reads "filter_FWD_public_REJECT: IN=flannel.1 OUT=cni0
// ... SRC=10.244.1.0 DST=10.244.0.2 ..." as the kernel's line it was cut
// from.
func parseBareNFLog(line string) (model.LogEvent, bool) {
	if !strings.Contains(line, "IN=") || !nfLogRe.MatchString(line) {
		return model.LogEvent{}, false
	}
	return model.LogEvent{Source: "kernel", Message: line}, true
}

// bareKernelRe matches the start of a kernel line cut from its log
// without dmesg's or syslog's prefix: the subsystem that printed it.
var bareKernelRe = lazyre.New(`^(?:TCP|nf_conntrack|neighbour|IPv4|IPv6): `)

// parseBareKernel reads a kernel line pasted without its prefix ("TCP:
// request_sock_TCP: Possible SYN flooding on port 11211. Sending
// cookies.") as the kernel's, when it holds one of the kernel messages a
// paste carries alone (wrappedKernelMessages, a martian source).
func parseBareKernel(line string) (model.LogEvent, bool) {
	if len(line) > 2 && line[0] == '"' && line[len(line)-1] == '"' {
		line = line[1 : len(line)-1] // quoted in a ticket's prose
	}
	if !bareKernelRe.MatchString(line) {
		return model.LogEvent{}, false
	}
	known := strings.Contains(line, "martian source ")
	for _, k := range wrappedKernelMessages {
		known = known || strings.Contains(line, k)
	}
	if !known {
		return model.LogEvent{}, false
	}
	return model.LogEvent{Source: "kernel", Message: line}, true
}

// parseBareMsg reads logfmt that starts with its message, as containerd's
// lines are pasted without their time and level: `msg="StopPodSandbox
// for \"...\" failed" error="failed to destroy network ..."`. An error
// field makes the level "error".
func parseBareMsg(line string) (model.LogEvent, bool) {
	if !strings.HasPrefix(line, "msg=") {
		return model.LogEvent{}, false
	}
	kv := map[string]string{}
	if rest := readKV(line, kv); rest != "" {
		return model.LogEvent{}, false
	}
	if _, ok := kv[multiKeyMarker]; ok {
		return model.LogEvent{}, false
	}
	msg, ok := kv["msg"]
	if !ok {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Message: msg}
	delete(kv, "msg")
	if _, ok := kv["error"]; ok {
		ev.Level = "error"
	}
	if len(kv) > 0 {
		ev.Fields = kv
	}
	return ev, true
}
