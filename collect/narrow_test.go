package collect

import (
	"testing"

	"github.com/netmortem/netmortem/model"
)

// The kernel's log is collected, but a report lacking logs is not sent to
// it: it holds kernel lines, not the components' logs most rules read.
func TestAskForLeavesNarrowOut(t *testing.T) {
	c, ok := Lookup("kernel-log")
	if !ok || !c.Narrow {
		t.Fatalf("kernel-log: %+v, found %v; want a narrow command", c, ok)
	}
	for _, a := range AskFor(model.KindLogs) {
		if a.Narrow {
			t.Errorf("AskFor(logs) names %s, a narrow command", a.Name)
		}
	}
	found := false
	for _, k := range ForKind(model.KindLogs) {
		found = found || k.Name == "kernel-log"
	}
	if !found {
		t.Errorf("ForKind(logs) lost kernel-log: the collector would not run it")
	}
}
