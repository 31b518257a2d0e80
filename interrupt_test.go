package netmortem

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
)

// An interrupt says whether the rules ran on what was read: none of them,
// some of them, or all, the interrupt coming after them. Without that, an
// analysis whose every rule was stopped read as one that found nothing.
func TestIncompleteSaysRulesStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rules := []*analyzer.Rule{
		{Name: "a", Run: func(*analyzer.Pass) error { return nil }},
		{Name: "b", Run: func(p *analyzer.Pass) error { return p.Ctx.Err() }},
	}
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "a.pcap", Kind: model.KindCapture}}}
	in := operand.Opened{Snap: snap}
	stopped := analyzer.Run(ctx, snap, rules, nil)
	// A rule the configuration disables is not counted.
	off := analyzer.Run(ctx, snap, rules, &analyzer.Config{Rules: map[string]analyzer.RuleConfig{"a": {Disabled: true}}})
	ran := analyzer.Result{Rules: rules}
	half := analyzer.Result{Rules: rules, Errors: []analyzer.RuleError{{Rule: "b", Err: context.Canceled.Error()}}}
	for _, c := range []struct {
		res  analyzer.Result
		want string
	}{
		{stopped, "interrupted: none of the 2 rules ran to the end (each is listed as failed): what was read was not analyzed"},
		{off, "interrupted: the one rule run did not run to the end (it is listed as failed): what was read was not analyzed"},
		{half, "interrupted: 1 of the 2 rules did not run to the end (listed as failed); the findings are the others', on what was read until then"},
		{ran, "interrupted: the findings cover what was read and analyzed until then"},
	} {
		cut, of := rulesCut(c.res)
		out, _ := incomplete(ctx, ctx, false, 0, time.Now(), in, cut, of)
		if len(out) == 0 || out[0] != c.want {
			t.Errorf("%d of %d rules stopped: %q, want %q first", cut, of, strings.Join(out, "; "), c.want)
		}
	}
}
