package rules

import (
	"slices"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// preflightFile is one of kubeadm's preflight checks of a file under
// /proc/sys, as kubeadm init or join printed it: the setting it read, and
// whether it found the file not set to 1 or missing.
type preflightFile struct {
	le      *model.LogEvent
	setting string // the sysctl name: net.ipv4.ip_forward
	missing bool   // "does not exist": the module that makes it is not loaded
	fatal   bool   // [ERROR ...]: kubeadm stopped on it; [WARNING ...] when ignored (--ignore-preflight-errors)
}

// preflightFileRe reads kubeadm's FileContent and FileExisting checks of
// /proc/sys ("[ERROR FileContent--proc-sys-net-ipv4-ip_forward]:
// /proc/sys/net/ipv4/ip_forward contents are not set to 1", "[ERROR
// FileContent--proc-sys-net-bridge-bridge-nf-call-iptables]:
// /proc/sys/net/bridge/bridge-nf-call-iptables does not exist"), with
// the check's level; a check made non-fatal prints WARNING.
var preflightFileRe = lazyre.New(`(?:\[(ERROR|WARNING) File(?:Content|Existing)--proc-sys-[\w.-]+\]: |^)/proc/sys/(\S+) (contents are not set to 1|does not exist)`)

// preflightFiles returns kubeadm's preflight checks of /proc/sys files in
// the logs whose setting is one of names, in the logs' order.
func preflightFiles(s *model.Snapshot, names ...string) []preflightFile {
	var out []preflightFile
	for i := range s.Logs {
		le := &s.Logs[i]
		if !strings.Contains(le.Message, "/proc/sys/") {
			continue
		}
		m := preflightFileRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		if m[1] == "" {
			// The check's line as the client-errors format reads it: its
			// name and level apart from the message.
			if !strings.HasPrefix(le.Fields["check"], "File") || le.Level != "E" && le.Level != "W" {
				continue
			}
			m[1] = map[string]string{"E": "ERROR", "W": "WARNING"}[le.Level]
		}
		if name := strings.ReplaceAll(m[2], "/", "."); slices.Contains(names, name) {
			out = append(out, preflightFile{le: le, setting: name, missing: m[3] == "does not exist", fatal: m[1] == "ERROR"})
		}
	}
	return out
}

// says is what a check says of its setting, in words.
func (c preflightFile) says() string {
	if c.missing {
		return "/proc/sys/" + strings.ReplaceAll(c.setting, ".", "/") + " does not exist"
	}
	return "/proc/sys/" + strings.ReplaceAll(c.setting, ".", "/") + " is not 1"
}
