package analyzer_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// countingFact counts the sysctls of the snapshot, and how many times it
// was computed.
func countingFact(calls *atomic.Int32) *analyzer.Fact[int] {
	return &analyzer.Fact[int]{Name: "sysctl-count", Doc: "how many sysctls",
		Compute: func(fs *analyzer.FactSet) int {
			calls.Add(1)
			return len(fs.Snapshot().Sysctls)
		}}
}

// factRule reports one finding whose title holds the value of f.
func factRule(name string, f *analyzer.Fact[int], requires ...analyzer.FactKey) *analyzer.Rule {
	return &analyzer.Rule{Name: name, Doc: "t\n\nx", Severity: analyzer.Info, Requires: requires,
		Run: func(p *analyzer.Pass) error {
			p.Report(analyzer.Finding{Title: strings.Repeat("x", f.Of(p))})
			return nil
		}}
}

func twoSysctls() *model.Snapshot {
	return &model.Snapshot{Sysctls: []model.Sysctl{{Name: "a"}, {Name: "b"}}}
}

func TestFactComputedOnceAcrossRules(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	rules := []*analyzer.Rule{factRule("one", f, f), factRule("two", f, f), factRule("three", f, f)}
	res := analyzer.Run(context.Background(), twoSysctls(), rules, nil)
	if len(res.Errors) != 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("computed %d times for 3 rules, want once", n)
	}
	for _, fd := range res.Findings {
		if fd.Title != "xx" {
			t.Errorf("%s: title %q, want the fact's value 2 as %q", fd.Rule, fd.Title, "xx")
		}
	}
}

func TestFactIsLazy(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	// The rule requires the fact but is disabled: nothing reads it.
	cfg := &analyzer.Config{}
	cfg.Disable("one")
	analyzer.Run(context.Background(), twoSysctls(), []*analyzer.Rule{factRule("one", f, f)}, cfg)
	if n := calls.Load(); n != 0 {
		t.Errorf("computed %d times with no reader, want never", n)
	}
}

func TestFactConcurrentGet(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	fs := analyzer.NewFactSet(twoSysctls())
	var wg sync.WaitGroup
	got := make([]int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = f.Get(fs)
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("computed %d times by 16 goroutines, want once", n)
	}
	for i, v := range got {
		if v != 2 {
			t.Errorf("goroutine %d read %d, want 2", i, v)
		}
	}
}

// A fact read without being listed in Requires fails the rule, naming the
// fact; the other rules still run.
func TestFactNotRequired(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	rules := []*analyzer.Rule{factRule("forgets", f), factRule("lists", f, f)}
	res := analyzer.Run(context.Background(), twoSysctls(), rules, nil)
	if len(res.Errors) != 1 || res.Errors[0].Rule != "forgets" {
		t.Fatalf("errors %+v, want one for rule forgets", res.Errors)
	}
	if want := "fact sysctl-count: rule forgets reads it without listing it in Requires"; res.Errors[0].Err != want {
		t.Errorf("error %q, want %q", res.Errors[0].Err, want)
	}
	if len(res.Findings) != 1 || res.Findings[0].Rule != "lists" {
		t.Errorf("findings %+v, want lists' only", res.Findings)
	}
}

func TestFactSetByHand(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	fs := analyzer.NewFactSet(twoSysctls())
	f.Set(fs, 5)
	res := analyzer.RunFactSet(context.Background(), fs, []*analyzer.Rule{factRule("one", f, f)}, nil)
	if len(res.Findings) != 1 || res.Findings[0].Title != "xxxxx" {
		t.Errorf("findings %+v, want the hand-made value 5", res.Findings)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("computed %d times although set by hand", n)
	}
	// Set replaces a computed value too.
	fs = analyzer.NewFactSet(twoSysctls())
	if v := f.Get(fs); v != 2 {
		t.Fatalf("computed %d, want 2", v)
	}
	f.Set(fs, 1)
	if v := f.Get(fs); v != 1 {
		t.Errorf("after Set: %d, want 1", v)
	}
}

// RunFactSet keeps what the rules computed for a later run on the same facts.
func TestRunFactSetReusesFacts(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	fs := analyzer.NewFactSet(twoSysctls())
	for range 3 {
		analyzer.RunFactSet(context.Background(), fs, []*analyzer.Rule{factRule("one", f, f)}, nil)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("computed %d times over 3 runs, want once", n)
	}
}

func TestFactNeedsItself(t *testing.T) {
	var a, b *analyzer.Fact[int]
	a = &analyzer.Fact[int]{Name: "a", Compute: func(fs *analyzer.FactSet) int { return b.Get(fs) }}
	b = &analyzer.Fact[int]{Name: "b", Compute: func(fs *analyzer.FactSet) int { return a.Get(fs) + 1 }}
	res := analyzer.Run(context.Background(), twoSysctls(), []*analyzer.Rule{factRule("loops", a, a)}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Err != "fact a: computing it needs itself: a -> b -> a" {
		t.Errorf("errors %+v", res.Errors)
	}
}

func TestFactComputePanics(t *testing.T) {
	boom := &analyzer.Fact[int]{Name: "boom", Compute: func(*analyzer.FactSet) int { panic("index out of range") }}
	rules := []*analyzer.Rule{factRule("first", boom, boom), factRule("second", boom, boom)}
	res := analyzer.Run(context.Background(), twoSysctls(), rules, nil)
	if len(res.Errors) != 2 {
		t.Fatalf("errors %+v, want both rules failed", res.Errors)
	}
	for _, e := range res.Errors {
		if e.Err != "fact boom: computing it panicked: index out of range" {
			t.Errorf("%s: %q", e.Rule, e.Err)
		}
	}
	noCompute := &analyzer.Fact[int]{Name: "empty"}
	res = analyzer.Run(context.Background(), twoSysctls(), []*analyzer.Rule{factRule("r", noCompute, noCompute)}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Err != "fact empty: it has no Compute function" {
		t.Errorf("errors %+v", res.Errors)
	}
}

func TestValidateRequires(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	var typedNil *analyzer.Fact[int]
	for _, tt := range []struct {
		requires []analyzer.FactKey
		want     string
	}{
		{[]analyzer.FactKey{f, nil}, `rule "r": Requires[1] is nil`},
		{[]analyzer.FactKey{typedNil}, `rule "r": Requires[0] is nil`},
		{[]analyzer.FactKey{f, f}, `rule "r": Requires lists fact sysctl-count twice`},
	} {
		r := factRule("r", f, tt.requires...)
		if err := analyzer.Validate([]*analyzer.Rule{r}); err == nil || err.Error() != tt.want {
			t.Errorf("Validate: %v, want %q", err, tt.want)
		}
	}
	if err := analyzer.Validate([]*analyzer.Rule{factRule("r", f, f)}); err != nil {
		t.Errorf("valid rule: %v", err)
	}
	if got := factRule("r", f, f, typedNil).FactNames(); len(got) != 1 || got[0] != "sysctl-count" {
		t.Errorf("FactNames %v", got)
	}
}

// The library's entry points report bad arguments instead of panicking.
func TestRunBadArguments(t *testing.T) {
	var calls atomic.Int32
	f := countingFact(&calls)
	ok := factRule("ok", f, f)
	//lint:ignore SA1012 a nil context is what is tested
	res := analyzer.Run(nil, twoSysctls(), []*analyzer.Rule{ok}, nil)
	if len(res.Errors) != 0 || len(res.Findings) != 1 {
		t.Errorf("nil context: %+v", res)
	}
	res = analyzer.Run(context.Background(), nil, []*analyzer.Rule{ok}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Rule != "ok" || res.Errors[0].Err != "no snapshot to analyze (nil)" {
		t.Errorf("nil snapshot: %+v", res.Errors)
	}
	res = analyzer.Run(context.Background(), twoSysctls(), []*analyzer.Rule{ok, nil}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Rule != "#1" || res.Errors[0].Err != "rule 1 of the list is nil" || len(res.Findings) != 1 {
		t.Errorf("nil rule: %+v", res)
	}
	noRun := &analyzer.Rule{Name: "no-run", Doc: "t\n\nx", Severity: analyzer.Info}
	res = analyzer.Run(context.Background(), twoSysctls(), []*analyzer.Rule{noRun}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Err != "rule no-run has no Run function" {
		t.Errorf("nil Run: %+v", res.Errors)
	}
	res = analyzer.RunFactSet(context.Background(), nil, []*analyzer.Rule{ok}, nil)
	if len(res.Errors) != 1 || res.Errors[0].Err != "no snapshot to analyze (nil)" {
		t.Errorf("nil facts: %+v", res.Errors)
	}
	// A pass built by hand without facts: the rule fails, naming the fact.
	p := &analyzer.Pass{Rule: ok}
	func() {
		defer func() {
			fe, isFact := recover().(*analyzer.FactError)
			if !isFact || fe.Fact != "sysctl-count" {
				t.Errorf("recovered %v, want a FactError for sysctl-count", fe)
			}
		}()
		f.Of(p)
	}()
}
