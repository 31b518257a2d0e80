package logs

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ClientErrorsFormat reads what kubectl, helm and kubeadm print when the
// apiserver or a preflight check refuses them.
var ClientErrorsFormat = &format.Format{
	Name:    "client-errors",
	Kind:    model.KindLogs,
	Command: "the output of kubectl apply/create/patch, helm install/upgrade or kubeadm init/join, as pasted",
	Doc: "one event per line: helm's `Error: UPGRADE FAILED: ...` (and INSTALLATION, ROLLBACK), kubectl's " +
		"`The Service \"x\" is invalid: ...`, `Error from server (...): ...` and its TLS failures (`Unable to " +
		"connect to the server: x509: ...`; its other connection failures are the client-transcript format's), kubeadm's `[ERROR Check]: ...`, " +
		"`[WARNING Check]: ...`, `error execution phase ...` and its `[phase] ...` lines; the source is the tool " +
		"(helm, kubectl, kubeadm), the level E, W or I, the pasted command in Fields \"command\" and kubeadm's " +
		"check in Fields \"check\"; other lines (kubectl's `service/x created`) are skipped",
	Sniff: sniffClientErrors,
	Parse: format.Records(readClientErrors, func(s *model.Snapshot, out []model.LogEvent) { s.Logs = append(s.Logs, out...) }, "events"),
}

var (
	helmErrorRe    = lazyre.New(`^Error: ((?:UPGRADE|INSTALLATION|ROLLBACK) FAILED: .+)$`)
	kubectlErrorRe = lazyre.New(`^((?:The )?[A-Z][A-Za-z]* "[^"]+" is invalid: .+|Error from server(?: \([A-Za-z]+\))?: .+|Unable to connect to the server: (?:tls: [\w ]+: )?x509: .+)$`)
	kubeadmCheckRe = lazyre.New(`^\[(ERROR|WARNING) ([A-Za-z0-9_.-]+)\]: (.+)$`)
	kubeadmPhaseRe = lazyre.New(`^(error execution phase [\w/-]+: .+|\[(?:preflight|init|reset|join|certs|kubeconfig|kubelet-start|control-plane|etcd|wait-control-plane|kubelet-check|upload-config|upload-certs|mark-control-plane|bootstrap-token|addons|kubelet-finalize)\] .+)$`)
	// kubectlOutputRe is kubectl's own line for an object it wrote.
	kubectlOutputRe = lazyre.New(`^[a-z.0-9-]+/[a-z0-9.-]+ (?:created|configured|unchanged|deleted|patched|replaced)$`)
)

// clientError reads one line of kubectl, helm or kubeadm: its event.
func clientError(t string) (model.LogEvent, bool) {
	switch {
	case helmErrorRe.MatchString(t):
		return model.LogEvent{Source: "helm", Level: "E", Message: helmErrorRe.FindStringSubmatch(t)[1]}, true
	case kubectlErrorRe.MatchString(t):
		return model.LogEvent{Source: "kubectl", Level: "E", Message: t}, true
	case kubeadmCheckRe.MatchString(t):
		m := kubeadmCheckRe.FindStringSubmatch(t)
		return model.LogEvent{Source: "kubeadm", Level: m[1][:1], Message: m[3], Fields: map[string]string{"check": m[2]}}, true
	case kubeadmPhaseRe.MatchString(t):
		lvl := "I"
		if strings.HasPrefix(t, "error ") {
			lvl = "E"
		}
		return model.LogEvent{Source: "kubeadm", Level: lvl, Message: t}, true
	}
	return model.LogEvent{}, false
}

// sniffClientErrors scores head by the share of its lines that are the
// tools' error lines; kubectl's lines for objects it wrote count, but not
// alone.
func sniffClientErrors(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	errs, other, total := 0, 0, 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || text.IsPromptOrMarker(line) {
			continue
		}
		if _, _, ok := text.ShellCommand(line); ok {
			continue
		}
		total++
		if _, ok := clientError(t); ok {
			errs++
		} else if kubectlOutputRe.MatchString(t) {
			other++
		}
	}
	if errs == 0 {
		return 0
	}
	return text.RatioScore(errs+other, total, 85)
}

func readClientErrors(r io.Reader, src *format.File, errs *model.ErrorList) []model.LogEvent {
	var out []model.LogEvent
	cmd := src.Command
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(_ *text.Line, c string) { cmd = c }}, func(l *text.Line) {
		ev, ok := clientError(l.Trimmed)
		if !ok {
			return // the tools' other output
		}
		ev.Node, ev.Pos = l.Node, l.Pos()
		if cmd != "" {
			if ev.Fields == nil {
				ev.Fields = map[string]string{}
			}
			ev.Fields["command"] = cmd
		}
		out = append(out, ev)
	})
	return out
}
