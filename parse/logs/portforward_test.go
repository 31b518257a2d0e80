package logs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/logs"
)

// kubectl port-forward's transcript, as kelseyhightower/kubernetes-the-
// hard-way#78 pasted it: the command lines (the forward's and curl's)
// without a prompt, the forward's own lines and "..." around the klog
// line of its error. Only that line is an event; nothing is warned of.
func TestPortForwardTranscript(t *testing.T) {
	file := filepath.Join("..", "..", "fixtures", "field", "port-forward-socat-missing--kthw-issue-78", "kubectl-port-forward.txt")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := logs.Logs(strings.NewReader(string(b)), "kubectl-port-forward.txt")
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if evs[0].Pos.Line != 7 || evs[0].Level != "E" || !strings.HasSuffix(evs[0].Message, "socat not found.") {
		t.Errorf("got %+v", evs[0])
	}
	// The same lines are sniffed as a log: the transcript's own lines and
	// commands count for no format.
	snap, warns, err := parse.Open(t.Context(), file, nil)
	if err != nil || len(warns) != 0 || len(snap.Logs) != 1 {
		t.Errorf("Open: %d events, warnings %v, %v", len(snap.Logs), warns, err)
	}
	// A program's message naming it with a colon is no command line.
	evs, err = logs.Logs(strings.NewReader("curl: (7) Failed to connect to localhost port 8080: Connection refused\n"), "x.log")
	if err == nil {
		t.Errorf("curl's message passed over as a command line: %+v", evs)
	}
}
