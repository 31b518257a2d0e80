package analyzer

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// IncompleteFact is the key of Finding.Facts that says a finding was
// judged from evidence cut short (model.Snapshot.Cuts): which input, and
// how far to trust it.
const IncompleteFact = "incomplete"

// onCutEvidence marks f, a finding of a rule over snap, when it rests on
// evidence cut short. lost lists the facts the rule read that stand for
// what a cut lost (a default in place of the bundle's own setting, see
// Lost): such a finding is not proof, so it is at most info and not
// proven, whatever the configuration says. A finding citing an input that
// was cut (or a member of a cut archive) keeps its severity and says so:
// what the input does not show may have happened after its end.
func onCutEvidence(f Finding, snap *model.Snapshot, lost []string) Finding {
	if snap == nil || len(snap.Cuts) == 0 {
		return f
	}
	var notes []string
	if len(lost) > 0 {
		notes = append(notes, "judged from what a cut lost: "+strings.Join(lost, "; "))
		f.Severity = min(f.Severity, Info)
		if f.Certainty == Proven {
			f.Certainty = Likely
		}
	}
	seen := map[string]bool{}
	for _, e := range f.Evidence {
		c, ok := snap.CutOf(e.File)
		if !ok || seen[c.File] {
			continue
		}
		seen[c.File] = true
		notes = append(notes, fmt.Sprintf("it cites %s, which was cut (%s): what that input does not show may have happened after its end", e.File, c.String()))
	}
	if len(notes) == 0 {
		return f
	}
	facts := make(map[string]any, len(f.Facts)+1)
	for k, v := range f.Facts {
		facts[k] = v
	}
	facts[IncompleteFact] = strings.Join(notes, "; ")
	f.Facts = facts
	return f
}
