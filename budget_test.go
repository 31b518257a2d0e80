package netmortem

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// TestRuleGrace checks that the rules get time to run on what was read
// when reading used up the whole budget: at least min(budget,
// maxRuleGrace).
func TestRuleGrace(t *testing.T) {
	read, cancel := withBudget(t.Context(), time.Nanosecond)
	defer cancel()
	<-read.Done()
	rules, cancelRules := ruleContext(t.Context(), read, 10*time.Minute)
	defer cancelRules()
	if rules.Err() != nil {
		t.Fatal("the rules get no time after reading used up the budget")
	}
	if d, ok := rules.Deadline(); !ok || time.Until(d) < 50*time.Second || time.Until(d) > maxRuleGrace {
		t.Errorf("rule deadline in %v, want about %v", time.Until(d), maxRuleGrace)
	}
}

// A time budget that runs out once every input was read cut nothing: the
// analysis is whole, not "reading stopped there" with exit code 3. One
// that runs out before the read says so, the input listed as not read.
func TestBudgetOutAfterReading(t *testing.T) {
	path := filepath.Join(testutil.Root(), "fixtures/captures/handshakes.pcap")
	open := operand.OpenAll
	defer func() { operand.OpenAll = open }()
	whole := analyzeFor(t, path, 0)
	if len(whole.Report.Findings) == 0 || len(whole.Report.Incomplete) > 0 {
		t.Fatalf("%s: %d findings, incomplete %q; want findings and no reason", path, len(whole.Report.Findings), whole.Report.Incomplete)
	}
	for _, late := range []bool{true, false} {
		operand.OpenAll = func(ctx context.Context, paths []string, opts *parse.Options, objs *operand.Objects, readers map[string]io.Reader) (*model.Snapshot, model.ErrorList, error) {
			if !late {
				<-ctx.Done()
			}
			snap, warns, err := open(ctx, paths, opts, objs, readers)
			<-ctx.Done()
			return snap, warns, err
		}
		// The rules' grace is the budget itself (at most maxRuleGrace):
		// long enough for every rule on a loaded machine.
		a := analyzeFor(t, path, 500*time.Millisecond)
		inc := strings.Join(a.Report.Incomplete, "; ")
		switch {
		case late && (a.Cut || inc != "" || len(a.Report.Findings) != len(whole.Report.Findings)):
			t.Errorf("budget out after reading: cut %v, incomplete %q, %d findings; want none and the %d of the whole run",
				a.Cut, inc, len(a.Report.Findings), len(whole.Report.Findings))
		case !late && (!a.Cut || !strings.Contains(inc, "reading stopped there") ||
			len(a.Snapshot.Inputs) != 1 || a.Snapshot.Inputs[0].Skipped != model.SkippedCutShort):
			t.Errorf("budget out before reading: cut %v, incomplete %q, inputs %+v; want reading stopped, %s not read",
				a.Cut, inc, a.Snapshot.Inputs, path)
		}
	}
}

// analyzeFor runs an analysis of path with the time budget d, no
// configuration looked for.
func analyzeFor(t *testing.T, path string, d time.Duration) *Analysis {
	t.Helper()
	p, err := Prepare(t.Context(), []Operand{{Path: path}}, &Options{Timeout: d, NoConfigDiscovery: true, NoTimelines: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.Run(t.Context())
}
