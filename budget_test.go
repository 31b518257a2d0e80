package netmortem

import (
	"testing"
	"time"
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
